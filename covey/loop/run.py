"""The agent loop: request, step, tools, repeat — bounded by ``max_turns``.

The loop yields events (``covey.events``) as they happen; whoever drives it
(the lifecycle, an actor, a test) decides where they go. It knows nothing of
Ray, sub-agents or transcripts: notifications arrive through an ``Inbox``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Protocol

from covey.model.messages import Message, ToolUseBlock

from covey.errors import ModelAPIError
from covey.events import AssistantEvent, CompactBoundary, Event, PermissionDenied, ResultEvent, StreamEvent, UserEvent
from covey.loop.compact import Compactor, estimate_tokens
from covey.loop.execute import ToolExecutor, interrupted_results
from covey.loop.steps import ContinueTurn, CutOff, FinalOutput, RunTools, Stop, next_step, text_of
from covey.model.base import Model, ModelRequest, TokenUsage
from covey.model.effort import request_effort
from covey.teams.render import render_notice

CACHE = {"type": "ephemeral"}
CONTINUATIONS = 3
"""Cut-off replies in a row the loop asks the model to go on from, before the run ends on one."""
GO_ON = ("Your reply was cut off at the output token limit. Go on exactly where it stopped, mid-sentence "
         "if that is where it ended: no apology, no recap. Split what is left into smaller pieces.")
CUT_CALL = "This call was cut off at the output token limit before its input was complete; it did not run."


class Inbox(Protocol):
    """Where notifications for this agent arrive (background children, teammates)."""

    async def drain(self) -> list[str]:
        """Texts of the notifications waiting now, oldest first; [] if none."""

    async def wait(self) -> list[str]:
        """Block until a notification arrives; [] once nothing is outstanding."""

    async def outstanding(self) -> bool:
        """Whether background work owned by this agent may still notify it."""

    def owns_background(self) -> bool:
        """Whether this agent started anything that may notify it later (known locally: no
        Ray call). False lets a leaf agent end at once; mail that reaches it after its
        last turn resumes it instead (the registry sees to that)."""


@dataclass
class LoopConfig:
    model_id: str
    system: list[dict[str, Any]]
    max_turns: int = 100
    max_tokens: int = 32_000
    """Each request's output limit: the model's, or ``CLAUDE_CODE_MAX_OUTPUT_TOKENS`` (covey.model.limits)."""
    thinking: dict[str, Any] | None = None
    effort: str | int | None = None
    """The agent's reasoning effort; each request carries what its model takes of it."""
    wait_for_background: bool = True
    mail_before_first_turn: bool = True
    """Look at the inbox before the first request. A fresh agent has nothing there yet (no one
    knows its id before it runs), so it skips that round trip; a resumed one must look."""
    """Non-interactive runs take another turn per notification instead of ending (docs/subagents.md#faults)."""
    tool_result_reminder: str | None = None
    """Text appended after every batch of tool results (Verification's critical reminder)."""
    partial_messages: bool = False
    """Yield each raw stream event of a reply as a ``StreamEvent`` while it arrives."""
    tools: list[dict[str, Any]] | None = None
    """The tools array to send as is (a fork's: its parent's bytes); None: the executor's tools' schemas."""
    inherited: int = 0
    """How many first messages a fork inherited: the last of them carries a cache breakpoint, so
    sibling forks read the prefix the first one wrote (docs/subagents.md#caching)."""


@dataclass
class LoopStats:
    num_turns: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    api_ms: int = 0
    started: float = field(default_factory=time.monotonic)
    results: int = 0
    """Results reported so far: each one closes a turn, as Claude Code's do."""
    turn_turns: int = 0
    turn_usage: TokenUsage = field(default_factory=TokenUsage)
    turn_started: float = field(default_factory=time.monotonic)
    """Requests, tokens and start time of the turn that is open (since the last result)."""

    def duration_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def close_turn(self) -> tuple[int, TokenUsage, int]:
        """The open turn's requests, tokens and wall time; the next turn starts now."""
        figures = (self.turn_turns, self.turn_usage, int((time.monotonic() - self.turn_started) * 1000))
        self.turn_turns, self.turn_usage, self.turn_started = 0, TokenUsage(), time.monotonic()
        self.results += 1
        return figures


class AgentLoop:
    def __init__(
        self,
        *,
        model: Model,
        config: LoopConfig,
        executor: ToolExecutor,
        session_id: str = "",
        agent_id: str | None = None,
        cost_of: Any = None,
        inbox: Inbox | None = None,
        parent_tool_use_id: str | None = None,
        stop_check: Any = None,
        compactor: Compactor | None = None,
    ) -> None:
        self.model = model
        self.config = config
        self.executor = executor
        self.session_id = session_id
        self.agent_id = agent_id
        self.cost_of = cost_of or (lambda model_id, usage: 0.0)
        self.inbox = inbox
        self.parent_tool_use_id = parent_tool_use_id
        self.stop_check = stop_check
        """``async (final_text) -> str | None``: a reason to keep going instead of stopping (Stop hooks)."""
        self.messages: list[dict[str, Any]] = []
        self.stats = LoopStats()
        self.denials: list[dict[str, Any]] = []
        self.last_stop_reason: str | None = None
        self.sent_tools: list[dict[str, Any]] | None = None
        """The tools array of the last request, without its breakpoint (what a fork inherits)."""
        self.compactor = compactor
        self.context_tokens = 0
        """The context the last reply reported (input, cache and output tokens)."""
        self.counted = 0
        """How many messages that figure covers; later ones are estimated."""
        self.cut_offs = 0
        """Replies cut off at ``max_tokens`` in a row."""

    def cache_safe_params(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """System blocks, tools array and messages as the last request sent them, before its
        breakpoints (SPEC 5 step 13): a fork re-adds them in the same places, so its prefix
        is that request's byte for byte."""
        tools = self.sent_tools if self.sent_tools is not None else self._tools()
        return list(self.config.system), list(tools), list(self.messages)

    def _tools(self) -> list[dict[str, Any]]:
        if self.config.tools is not None:
            return self.config.tools
        return [tool.schema() for tool in self.executor.tools.values()]

    async def run(self, messages: list[dict[str, Any]]) -> AsyncIterator[Event]:
        self.messages.extend(messages)
        first = True
        while True:
            if (not first or self.config.mail_before_first_turn) and (texts := await self._drain()):
                yield self._take_notifications(texts)
            first = False
            if self.stats.num_turns >= self.config.max_turns:
                yield self._result("error_max_turns", f"Reached maximum number of turns ({self.config.max_turns})",
                                   "max_turns")
                return
            if (boundary := await self._compact_if_due()) is not None:
                yield boundary
            try:
                if self.config.partial_messages:
                    async for item in self._streamed_request():
                        if isinstance(item, StreamEvent):
                            yield item
                        else:
                            message = item
                else:
                    message = await self._request()
            except ModelAPIError as exc:
                yield self._result("error_during_execution", f"Model API error: {exc}", "api_error",
                                   api_error_status=exc.status_code)
                return
            yield self._event(AssistantEvent, message=wire_message(message), request_id=message.request_id)
            step = next_step(message)
            self.cut_offs = self.cut_offs + 1 if isinstance(step, CutOff) else 0
            match step:
                case CutOff(calls=calls) if self.cut_offs <= CONTINUATIONS:
                    yield self._go_on(calls)
                case CutOff(text):
                    yield self._result("error_during_execution", text or "the model's reply hit max_tokens",
                                       "model_error", why="the model's reply hit max_tokens")
                    return
                case RunTools(calls):
                    denied = len(self.denials)
                    await self._run_tools(calls)
                    for event in self._denied_events(self.denials[denied:]):
                        yield event
                    yield self._event(UserEvent, message=self.messages[-1], tool_use_result=self._tool_use_result())
                case ContinueTurn():
                    continue
                case FinalOutput(text):
                    if reason := await self._stop_blocked(text):
                        self.messages.append({"role": "user", "content": reason})
                        yield self._event(UserEvent, message=self.messages[-1])
                        continue
                    yield self._result("success", text, "completed")
                    if not (texts := await self._await_background()):
                        return
                    yield self._take_notifications(texts)
                case Stop(reason, text):
                    yield self._result("error_during_execution", text or reason, "model_error", why=reason)
                    return

    def _go_on(self, calls: tuple[ToolUseBlock, ...]) -> UserEvent:
        """After a cut-off reply: its calls answered as not run, and the model asked to go on."""
        blocks = [{"type": "tool_result", "tool_use_id": call.id, "content": CUT_CALL, "is_error": True} for call in calls]
        self.messages.append({"role": "user", "content": [*blocks, {"type": "text", "text": GO_ON}]})
        return self._event(UserEvent, message=self.messages[-1])

    async def _compact_if_due(self) -> CompactBoundary | None:
        """Summarise the conversation when it nears the window (docs/compaction.md); None if not
        due, blocked by a PreCompact hook, or the summary failed (the run goes on uncompacted)."""
        tokens = self.context_tokens + estimate_tokens(self.messages[self.counted:])
        if self.compactor is None or not self.messages or not self.compactor.due(tokens):
            return None
        blocked, instructions = await self.compactor.instructions("auto")
        if blocked:
            return None
        try:
            reply = await self.model.create(self._summary_request(self.compactor, instructions))
        except ModelAPIError:
            reply = None
        if reply is None or not text_of(reply).strip():
            self.compactor.failures += 1
            return None
        done = await self.compactor.finish(text_of(reply), pre_tokens=tokens, trigger="auto", reply=reply)
        usage = TokenUsage.of(reply.usage)
        self.stats.usage += usage
        self.stats.turn_usage += usage
        self.stats.cost_usd += self.cost_of(reply.model or self.config.model_id, usage)
        self.messages = done.messages
        self.config.inherited = 0  # a fork's inherited prefix is gone with the rest
        self.context_tokens, self.counted = 0, 0
        return self._event(CompactBoundary, compact_metadata={"trigger": "auto", "pre_tokens": tokens},
                           context=done.context, summary=done.summary, attachments=done.attachments,
                           usage=usage.model_dump(), model=reply.model or self.config.model_id)

    def _summary_request(self, compactor: Compactor, instructions: str | None) -> ModelRequest:
        """The summary request: this agent's system prompt, tools and conversation as its last request
        sent them (SPEC 5 step 13: the prompt cache serves that prefix), the summary prompt appended.
        No thinking: the reserve may be below a thinking budget."""
        return ModelRequest(
            model=self.config.model_id, system=_with_breakpoint(self.config.system),
            messages=with_breakpoints(compactor.request_messages(self.messages, instructions)),
            tools=_with_breakpoint(self.sent_tools if self.sent_tools is not None else self._tools()),
            max_tokens=compactor.limits.reserve, agent_id=self.agent_id,
        )

    async def _streamed_request(self) -> AsyncIterator[StreamEvent | Message]:
        """``_request``, with its stream events as they arrive, then its message last."""
        arrived: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        reply = asyncio.ensure_future(self._request(on_stream=arrived.put_nowait))
        try:
            while not reply.done() or not arrived.empty():
                if arrived.empty():
                    waiting = asyncio.ensure_future(arrived.get())
                    await asyncio.wait({reply, waiting}, return_when=asyncio.FIRST_COMPLETED)
                    if not waiting.done():
                        waiting.cancel()
                        continue
                    raw = waiting.result()
                else:
                    raw = arrived.get_nowait()
                yield self._event(StreamEvent, event=raw)
            yield reply.result()
        finally:
            if not reply.done():
                reply.cancel()

    async def _request(self, on_stream: Any = None) -> Message:
        self.sent_tools = self._tools()
        request = ModelRequest(
            model=self.config.model_id,
            system=_with_breakpoint(self.config.system),
            messages=with_breakpoints(self.messages, self.config.inherited),
            tools=_with_breakpoint(self.sent_tools),
            max_tokens=self.config.max_tokens,
            thinking=self.config.thinking,
            effort=request_effort(self.config.model_id, self.config.effort),
            agent_id=self.agent_id,
            on_stream=on_stream,
        )
        started = time.monotonic()
        message = await self.model.create(request)
        self.stats.api_ms += int((time.monotonic() - started) * 1000)
        self.stats.num_turns += 1
        self.stats.turn_turns += 1
        self.last_stop_reason = message.stop_reason
        usage = TokenUsage.of(message.usage)
        self.stats.usage += usage
        self.stats.turn_usage += usage
        self.stats.cost_usd += self.cost_of(message.model or self.config.model_id, usage)
        self.messages.append(_assistant_message(message))
        self.context_tokens, self.counted = usage.total, len(self.messages)
        return message

    async def _run_tools(self, calls: tuple[ToolUseBlock, ...]) -> list[dict[str, Any]]:
        results: dict[str, dict[str, Any]] = {}
        try:
            await self.executor.run_all(calls, results)
        finally:
            # Even when cancelled, every tool_use gets its tool_result so the
            # history stays valid for a later resume.
            blocks = interrupted_results(calls, results)
            if self.config.tool_result_reminder:
                blocks = [*blocks, {"type": "text", "text": f"<system-reminder>\n{self.config.tool_result_reminder}\n</system-reminder>"}]
            self.messages.append({"role": "user", "content": blocks})
        return blocks

    async def _stop_blocked(self, text: str) -> str | None:
        return await self.stop_check(text) if self.stop_check is not None else None

    async def _drain(self) -> list[str]:
        # Background shells that ended since the last turn notify too (Claude Code's <task-notification>).
        processes = self.executor.ctx.processes
        shells = [render_notice(notice) for notice in processes.take_notices()] if processes is not None else []
        return [*shells, *(await self.inbox.drain() if self.inbox is not None else [])]

    async def _await_background(self) -> list[str]:
        """After a final answer: wait for owned background work; its notices start a new turn."""
        if self.inbox is None or not self.config.wait_for_background or not self.inbox.owns_background():
            return []
        texts = await self._drain()
        if not texts and await self.inbox.outstanding():
            texts = await self.inbox.wait()
        return texts

    def _take_notifications(self, texts: list[str]) -> UserEvent:
        """Append notices to the history; the event carries just the new blocks (for transcripts)."""
        blocks = [{"type": "text", "text": text} for text in texts]
        last = self.messages[-1] if self.messages else None
        # Keep roles alternating: after tool results the notices join that user message.
        if last is not None and last["role"] == "user":
            last["content"] = _as_blocks(last["content"]) + blocks
        else:
            self.messages.append({"role": "user", "content": blocks})
        return self._event(UserEvent, message={"role": "user", "content": blocks})

    def _tool_use_result(self) -> Any:
        """The structured result of the turn's call, when it made one call that has one (Claude Code
        puts one ``tool_use_result`` on each user event; covey answers a turn's calls in one)."""
        results = self.executor.structured
        return next(iter(results.values())) if len(results) == 1 else None

    def _denied_events(self, denials: list[dict[str, Any]]) -> list[PermissionDenied]:
        texts = {block.get("tool_use_id"): block.get("content") for block in _as_blocks(self.messages[-1]["content"])}
        return [PermissionDenied(session_id=self.session_id, agent_id=self.agent_id, tool_name=denial["tool_name"],
                                 tool_use_id=denial["tool_use_id"], message=str(texts.get(denial["tool_use_id"], "")))
                for denial in denials]

    def _event(self, cls: type[Event], **fields: Any) -> Event:
        return cls(session_id=self.session_id, agent_id=self.agent_id, parent_tool_use_id=self.parent_tool_use_id, **fields)

    def _result(self, subtype: str, text: str, terminal_reason: str, *, why: str = "",
                api_error_status: int | None = None) -> ResultEvent:
        """The turn's result: its own requests, tokens and time (Claude Code's per-turn figures);
        the API time and the denials of the whole run."""
        index = self.stats.results
        turns, usage, duration_ms = self.stats.close_turn()
        errors = [] if subtype == "success" else [text if not why or why in text else f"{why}: {text}"]
        return ResultEvent(
            session_id=self.session_id,
            agent_id=self.agent_id,
            subtype=subtype,
            is_error=subtype != "success",
            result=text,
            num_turns=turns,
            duration_ms=duration_ms,
            duration_api_ms=self.stats.api_ms,
            total_cost_usd=round(self.stats.cost_usd, 6),
            usage=usage.model_dump(),
            stop_reason=self.last_stop_reason if terminal_reason != "api_error" else None,
            terminal_reason=terminal_reason,
            permission_denials=list(self.denials),
            errors=errors,
            api_error_status=api_error_status,
            result_index=index,
        )


def wire_message(message: Message) -> dict[str, Any]:
    """An assistant reply as Claude Code prints it: the API's message with its usage's token
    counts present (0 when the API left them out) and its null fields kept."""
    data = message.model_dump(mode="json", exclude_none=True)
    usage = data.get("usage", {})
    data["usage"] = {
        "input_tokens": usage.pop("input_tokens", 0),
        "cache_creation_input_tokens": usage.pop("cache_creation_input_tokens", 0),
        "cache_read_input_tokens": usage.pop("cache_read_input_tokens", 0),
        "output_tokens": usage.pop("output_tokens", 0),
        **usage,
    }
    return {**data, "stop_reason": message.stop_reason, "stop_sequence": message.stop_sequence,
            "context_management": data.get("context_management")}


def _assistant_message(message: Message) -> dict[str, Any]:
    return {"role": "assistant", "content": [block.to_dict() for block in message.content]}


def _as_blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _with_breakpoint(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy whose last item carries a cache breakpoint (the static prefix)."""
    if not items:
        return []
    return [*items[:-1], {**items[-1], "cache_control": CACHE}]


def with_breakpoints(messages: list[dict[str, Any]], inherited: int = 0) -> list[dict[str, Any]]:
    """A copy with a breakpoint on the conversation's tail and, for a fork, on the end of what it
    inherited (the prefix its siblings share): with system and tools, at most the API's four.
    The markers never go into the history itself."""
    marked = list(messages)
    for index in {len(marked) - 1, inherited - 1}:
        if 0 <= index < len(marked) and (blocks := _as_blocks(marked[index]["content"])):
            marked[index] = {**marked[index], "content": _with_breakpoint(blocks)}
    return marked
