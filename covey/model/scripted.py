"""A deterministic model: rules matched against the request, or a queue of turns.

It runs the demo, the notebooks and the tests without a network, and lets users
test their own agent definitions. The rule-file format is documented on ``Rule``;
the first rule whose ``when`` holds (and whose ``times`` is not used up) answers.
The instance holds only plain data so it pickles into Ray actors.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections import deque
from pathlib import Path
from typing import Any, Iterable, Literal

import yaml
from covey.model.messages import Message
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from covey.common.safe_yaml import load_yaml
from covey.errors import ModelAPIError, UserError
from covey.model.base import ModelRequest

Texts = str | list[str] | None


def _all(values: Texts) -> list[str]:
    return [values] if isinstance(values, str) else list(values or [])


def _as_dict(item: Any) -> dict[str, Any]:
    # Messages may hold SDK objects (an assistant turn appended as is) as well as dicts.
    return item if isinstance(item, dict) else item.model_dump()


def _block_text(block: Any) -> str:
    """The searchable text of one content block: text, tool_use input JSON, tool_result content."""
    block = _as_dict(block)
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "tool_use":
        return json.dumps(block.get("input", {}), ensure_ascii=False)
    if kind == "tool_result":
        return _content_text(block.get("content"))
    return ""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(_block_text(block) for block in content or [])


def _message_text(message: Any) -> str:
    return _content_text(_as_dict(message).get("content"))


def _last_tool_results(messages: list[Any]) -> list[str]:
    content = _as_dict(messages[-1]).get("content") if messages else None
    if not isinstance(content, list):
        return []
    return [_block_text(block) for block in content if _as_dict(block).get("type") == "tool_result"]


class When(BaseModel):
    """Conditions on the request; every given one must hold (a list: each item must)."""

    model_config = ConfigDict(extra="forbid")

    system_contains: Texts = None
    system_lacks: Texts = None
    messages_contain: Texts = None
    """Anywhere in the messages: text, tool_use input JSON, tool_result content."""
    messages_lack: Texts = None
    last_message_contains: Texts = None
    last_tool_result_contains: Texts = None
    """In the tool results of the last message (none there: the condition fails)."""
    tools_include: Texts = None
    """These tool names are offered."""
    tools_exclude: Texts = None
    model: str | None = None
    """Exact model id."""

    def matches(self, request: ModelRequest) -> bool:
        system = _content_text(request.system)
        messages = "\n".join(_message_text(m) for m in request.messages)
        last = _message_text(request.messages[-1]) if request.messages else ""
        results = "\n".join(_last_tool_results(request.messages))
        tools = {tool.get("name") for tool in request.tools}
        return (
            all(t in system for t in _all(self.system_contains))
            and not any(t in system for t in _all(self.system_lacks))
            and all(t in messages for t in _all(self.messages_contain))
            and not any(t in messages for t in _all(self.messages_lack))
            and all(t in last for t in _all(self.last_message_contains))
            and all(t in results for t in _all(self.last_tool_result_contains))
            and all(t in tools for t in _all(self.tools_include))
            and not any(t in tools for t in _all(self.tools_exclude))
            and self.model in (None, request.model)
        )


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    input_from: dict[str, str] = Field(default_factory=dict)
    """Input fields taken from the conversation, ``{field: regex}``: the regex's last match in the
    messages' text (its first group, if it has one). For what a script cannot know in advance,
    such as the agent id in a launch receipt that a later SendMessage must name."""

    @field_validator("input_from")
    @classmethod
    def _compiles(cls, value: dict[str, str]) -> dict[str, str]:
        for name, pattern in value.items():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{name}: not a regular expression ({exc})") from None
        return value

    def input_for(self, request: ModelRequest) -> dict[str, Any]:
        if not self.input_from:
            return self.input
        text = "\n".join(_message_text(m) for m in request.messages)
        filled = dict(self.input)
        for name, pattern in self.input_from.items():
            matches = list(re.finditer(pattern, text))
            if not matches:
                raise ModelAPIError(f"scripted model: {self.name} input {name!r}: nothing in the conversation "
                                    f"matches {pattern!r}")
            last = matches[-1]
            filled[name] = last.group(1) if last.re.groups else last.group(0)
        return filled


class Reply(BaseModel):
    """One assistant message: optional text, then any tool calls."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    tool_use: list[ToolCall] = Field(default_factory=list)
    stop_reason: Literal["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"] | None = None
    """Default: ``tool_use`` when there are tool calls, else ``end_turn``."""

    @field_validator("tool_use", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    def to_message(self, request: ModelRequest) -> Message:
        content: list[dict[str, Any]] = [{"type": "text", "text": self.text}] if self.text else []
        content += [
            {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex}", "name": call.name, "input": call.input_for(request)}
            for call in self.tool_use
        ]
        stop_reason = self.stop_reason or ("tool_use" if self.tool_use else "end_turn")
        return _message(request, content, stop_reason)


class Rule(BaseModel):
    """``{when: When, reply: Reply, latency_s: float?, times: int?}``."""

    model_config = ConfigDict(extra="forbid")

    when: When = Field(default_factory=When)
    reply: Reply
    latency_s: float | None = Field(default=None, ge=0)
    """Overrides the script's default latency for this rule."""
    times: int | None = Field(default=None, ge=1)
    """The rule answers at most this many times; then later rules get their turn."""


class Script(BaseModel):
    """A whole rule file: ``{latency_s: float?, rules: [Rule, ...]}``."""

    model_config = ConfigDict(extra="forbid")

    latency_s: float = Field(default=0.0, ge=0)
    rules: list[Rule]
    prompt_cache: str | None = None
    """A directory for prompt-cache entries: usage then counts cache reads and writes by the
    requests' breakpoints (covey/model/prompt_cache.py), shared by every agent on the machine."""


Turn = Reply | Message | BaseException | dict[str, Any]


class ScriptedModel:
    """``await create(request)`` answers from queued turns first, then from the rules."""

    def __init__(self, rules: Iterable[Rule] = (), *, latency_s: float = 0.0, turns: Iterable[Turn] = (),
                 prompt_cache: str | None = None) -> None:
        self.rules = list(rules)
        self.latency_s = latency_s
        self.prompt_cache = prompt_cache
        self.turns: deque[Turn] = deque(turns)
        self.requests: list[ModelRequest] = []
        self._uses = [0] * len(self.rules)

    def __getstate__(self) -> dict[str, Any]:
        # A copy sent to another actor (each child gets its parent's model) starts with an
        # empty request log: the log is this process's, and it grows with every turn.
        return {**self.__dict__, "requests": []}

    @classmethod
    def from_turns(cls, turns: Iterable[Turn], *, latency_s: float = 0.0) -> "ScriptedModel":
        """Replies in order: reply dicts, ``Reply``s, ``Message``s, or exceptions to raise."""
        return cls(latency_s=latency_s, turns=turns)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "script") -> "ScriptedModel":
        try:
            script = Script.model_validate(data)
        except ValidationError as exc:
            raise UserError(f"{source}: invalid scripted model: {_describe(exc)}") from exc
        return cls(script.rules, latency_s=script.latency_s, prompt_cache=script.prompt_cache)

    @classmethod
    def from_file(cls, path: str | Path) -> "ScriptedModel":
        """A YAML or JSON rule file (YAML is a superset of JSON, so one parser reads both)."""
        try:
            data = load_yaml(Path(path).read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise UserError(f"{str(path)!r}: cannot read scripted model: {exc}") from exc
        model = cls.from_dict(data, source=repr(str(path)))
        if model.prompt_cache is not None:  # a relative directory is the rule file's neighbour
            model.prompt_cache = str(Path(path).parent / Path(model.prompt_cache).expanduser())
        return model

    async def create(self, request: ModelRequest) -> Message:
        self.requests.append(request)
        if self.turns:
            return self._cached(await self._answer_turn(self.turns.popleft(), request), request)
        index = self._match(request)
        rule = self.rules[index]
        self._uses[index] += 1
        await _sleep(rule.latency_s if rule.latency_s is not None else self.latency_s)
        return self._cached(rule.reply.to_message(request), request)

    def _cached(self, message: Message, request: ModelRequest) -> Message:
        """The reply's input tokens split as a prompt cache would serve the request (``prompt_cache``)."""
        if self.prompt_cache is None:
            return message
        from covey.model.prompt_cache import DirectoryCache

        usage = DirectoryCache(self.prompt_cache).usage(json.loads(json.dumps(request.to_api_kwargs(), default=str)))
        message.usage = message.usage.model_copy(update=usage)
        return message

    async def _answer_turn(self, turn: Turn, request: ModelRequest) -> Message:
        await _sleep(self.latency_s)
        if isinstance(turn, BaseException):
            raise turn
        if isinstance(turn, (Reply, dict)):
            return Reply.model_validate(turn).to_message(request)
        return Message.of(turn)  # a Message: covey's or the SDK's

    def _match(self, request: ModelRequest) -> int:
        for index, rule in enumerate(self.rules):
            if (rule.times is None or self._uses[index] < rule.times) and rule.when.matches(request):
                return index
        last = _message_text(request.messages[-1]) if request.messages else ""
        raise ModelAPIError(
            f"scripted model: no rule matches the request to {request.model!r} "
            f"({len(request.messages)} messages); last message starts: {last[:200]!r}"
        )


def _message(request: ModelRequest, content: list[dict[str, Any]], stop_reason: str) -> Message:
    # Usage ≈ characters / 4, the usual rough token rate, so budgets and cost move.
    sent = len(json.dumps(request.to_api_kwargs(), default=str))
    received = sum(len(_block_text(block)) for block in content)
    message = Message.model_validate({
        "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
        "model": request.model, "content": content, "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": max(1, sent // 4), "output_tokens": max(1, received // 4)},
    })
    message.request_id = f"req_{uuid.uuid4().hex[:24]}"  # as a server would send one
    return message


async def _sleep(latency_s: float) -> None:
    if latency_s > 0:
        await asyncio.sleep(latency_s)


def _describe(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or '<top>'}: {e['msg']}" for e in exc.errors())
