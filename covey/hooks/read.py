"""Reading a ``hooks`` mapping: Claude Code's settings shape, and the short frontmatter shape.

Settings files nest three levels (event -> matcher groups -> handlers)::

    {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "..."}]}]}

An agent definition's frontmatter may drop the inner list::

    PreToolUse: [{matcher: Bash, command: "..."}]

What covey does not run is skipped with a warning and the rest of the block
still loads: an event covey never fires (``FileChanged``, ``ConfigChange``...)
or does not know, a handler ``type`` it cannot run, a ``prompt``
or ``agent`` hook on an event Claude Code runs none on, a field it has no use
for (``once`` outside a skill, any unknown key). An entry covey does run but that is malformed (wrong type, blank
``command``, bad matcher regex, an ``http`` hook without a URL) is a
:class:`HookConfigError` naming the file and field.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, NoReturn

from pydantic import BaseModel, ValidationError

from covey.errors import UserError
from covey.hooks.conditions import valid_if
from covey.hooks.config import (
    CLAUDE_CODE_ONLY_EVENTS, EVENTS, PROMPT_EVENTS, AgentHook, CallbackHook, CommandHook, HookConfig, HookMatcher,
    HttpHook, McpToolHook, PromptHook,
)

log = logging.getLogger(__name__)

_GROUP_KEYS = ("matcher", "hooks")

def _keys(model: type[BaseModel]) -> set[str]:
    return {key for name, info in model.model_fields.items() for key in (name, info.alias) if key}


_MODELS: dict[str, tuple[type[BaseModel], set[str]]] = {
    "command": (CommandHook, _keys(CommandHook)), "http": (HttpHook, _keys(HttpHook)),
    "callback": (CallbackHook, _keys(CallbackHook)), "prompt": (PromptHook, _keys(PromptHook)),
    "agent": (AgentHook, _keys(AgentHook)), "mcp_tool": (McpToolHook, _keys(McpToolHook)),
}
_NOT_RUN: dict[str, str] = {}
_IGNORED = {
    "once": "honoured only for hooks in skill frontmatter; ignored here, as Claude Code ignores it",
}


@dataclass(frozen=True)
class HookWarning:
    """One item of a hooks config that covey skipped."""

    source: str
    """The file (or other origin) it was read from."""
    field: str
    """Where in it: ``hooks.PreCompact``, ``hooks.PreToolUse[0].hooks[1].async``."""
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.field}: {self.message}"


class HookConfigError(UserError):
    """A malformed hook entry: names the file and the field."""

    def __init__(self, source: str, field: str, message: str) -> None:
        super().__init__(source, field, message)
        self.source, self.field, self.message = source, field, message

    def __str__(self) -> str:
        return f"{self.source}: field {self.field!r}: {self.message}"


@dataclass
class ParsedHooks:
    config: HookConfig = field(default_factory=dict)
    """The validated matcher groups per event."""
    kept: dict[str, list[Any]] = field(default_factory=dict)
    """The mapping as written, minus what was skipped (re-reading it warns of nothing)."""
    warnings: list[HookWarning] = field(default_factory=list)


def read_hooks(raw: Any, source: str, *, short_form: bool = True) -> ParsedHooks:
    """Validate a ``hooks`` mapping: skip what covey does not support, raise on what is malformed.
    ``short_form``: a group may hold its one handler's keys beside its matcher (an agent's
    frontmatter); a settings file's group without a ``hooks`` list is skipped with a warning,
    as Claude Code reports it an invalid setting and skips it."""
    return _Reader(source, short_form).read(raw)


def parse_hooks(raw: Any, source: str) -> HookConfig:
    """:func:`read_hooks`'s config; its warnings go to the log."""
    parsed = read_hooks(raw, source)
    for warning in parsed.warnings:
        log.warning("%s", warning)
    return parsed.config


class _Reader:
    def __init__(self, source: str, short_form: bool = True) -> None:
        self.source, self.short_form = source, short_form
        self.event = ""
        self.out = ParsedHooks()

    def read(self, raw: Any) -> ParsedHooks:
        if not raw:
            return self.out
        if not isinstance(raw, dict):
            self._fail("hooks", f"must map event names to lists, not {type(raw).__name__}")
        for event, groups in raw.items():
            if event in EVENTS:
                self._event(event, groups)
            elif event in CLAUDE_CODE_ONLY_EVENTS:
                self._skip(f"hooks.{event}", "a Claude Code event covey never fires; skipped")
            else:
                self._skip(f"hooks.{event}", f"unknown event; skipped{_did_you_mean(event)}")
        return self.out

    def _event(self, event: str, groups: Any) -> None:
        self.event = event
        if not isinstance(groups, list):
            self._fail(f"hooks.{event}", "must be a list of matcher groups")
        read = [self._group(group, f"hooks.{event}[{i}]") for i, group in enumerate(groups)]
        self.out.config[event] = [matcher for matcher, _ in read]
        self.out.kept[event] = [kept for _, kept in read]

    def _group(self, group: Any, where: str) -> tuple[HookMatcher, dict[str, Any]]:
        if not isinstance(group, dict):
            self._fail(where, "must be an object with 'matcher' and 'hooks'")
        if "hooks" not in group and ("command" in group or "type" in group) and not self.short_form:
            self._skip(where, "has no 'hooks' list (write {\"matcher\": ..., \"hooks\": [{\"type\": \"command\", "
                              "\"command\": ...}]}); Claude Code reports it an invalid setting; skipped")
            return self._matcher(group.get("matcher", ""), [], where), {"hooks": []}
        if "hooks" not in group and ("command" in group or "type" in group):
            # The short frontmatter form: the handler's keys sit beside the matcher.
            handler = self._handler({k: v for k, v in group.items() if k != "matcher"}, where)
            kept = {**({"matcher": group["matcher"]} if "matcher" in group else {}), **(handler[1] if handler else {})}
            return self._matcher(group.get("matcher", ""), [handler] if handler else [], where), kept
        for key in [k for k in group if k not in _GROUP_KEYS]:
            self._skip(f"{where}.{key}", "field not supported by covey; skipped")
        handlers = group.get("hooks", [])
        if not isinstance(handlers, list):
            self._fail(f"{where}.hooks", "must be a list of hook handlers")
        read = [h for i, raw in enumerate(handlers) if (h := self._handler(raw, f"{where}.hooks[{i}]"))]
        kept = {k: group[k] for k in _GROUP_KEYS if k in group} | {"hooks": [h for _, h in read]}
        return self._matcher(group.get("matcher", ""), read, where), kept

    def _matcher(self, pattern: Any, handlers: list[tuple[BaseModel, dict[str, Any]]], where: str) -> HookMatcher:
        hooks = [hook for hook, _ in handlers]
        matcher: HookMatcher = self._validate(HookMatcher, {"matcher": pattern, "hooks": hooks}, where)
        return matcher

    def _handler(self, raw: Any, where: str) -> tuple[BaseModel, dict[str, Any]] | None:
        if not isinstance(raw, dict):
            self._fail(where, "must be an object with 'type' and 'command'")
        kind = raw.get("type", "command")
        if not isinstance(kind, str):
            self._fail(f"{where}.type", f"must be a string, not {type(kind).__name__}")
        if kind not in _MODELS:
            why = _NOT_RUN.get(kind, "unknown hook type")
            self._skip(f"{where}.type", f"hook type {kind!r} not supported by covey ({why}); hook skipped")
            return None
        if kind in ("prompt", "agent") and self.event not in PROMPT_EVENTS:
            self._skip(f"{where}.type", f"Claude Code runs {kind} hooks only on {', '.join(sorted(PROMPT_EVENTS))}; "
                                        "hook skipped")
            return None
        if raw.get("shell") == "powershell":
            self._skip(f"{where}.shell", "covey runs hooks with the POSIX shell, not PowerShell; hook skipped")
            return None
        # "callback": a claude-agent-sdk client's hook (its hookCallbackIds), run over the control protocol.
        model, keys = _MODELS[kind]
        for key in [k for k in raw if k not in keys]:
            message = _IGNORED.get(key, "field not supported by covey; skipped (the hook runs without it)")
            self._skip(f"{where}.{key}", message)
        kept = {k: v for k, v in raw.items() if k in keys}
        if isinstance(kept.get("if"), str) and (problem := valid_if(kept["if"])):
            self._skip(f"{where}.if", f"not a permission rule ({problem}); hook skipped")
            return None
        return self._validate(model, kept, where), kept

    def _validate(self, model: type[BaseModel], data: dict[str, Any], where: str) -> Any:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            problem = exc.errors()[0]
            self._fail(".".join([where, *(str(part) for part in problem["loc"])]), problem["msg"])

    def _skip(self, where: str, message: str) -> None:
        self.out.warnings.append(HookWarning(self.source, where, message))

    def _fail(self, where: str, message: str) -> NoReturn:
        raise HookConfigError(self.source, where, message)


def _did_you_mean(event: str) -> str:
    close = [known for known in EVENTS if known.lower() == str(event).lower()]
    return f" (did you mean {close[0]!r}?)" if close else ""
