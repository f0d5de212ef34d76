"""Hook configuration: Claude Code's settings shape, and the short frontmatter shape.

Settings files nest three levels (event -> matcher groups -> handlers)::

    {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "..."}]}]}

An agent definition's frontmatter may drop the inner list::

    PreToolUse: [{matcher: Bash, command: "..."}]
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from covey.errors import UserError

HookEvent = Literal[
    "PreToolUse", "PostToolUse", "Stop", "SubagentStop", "SessionStart", "UserPromptSubmit", "Notification",
]
EVENTS: tuple[str, ...] = get_args(HookEvent)

# A matcher written for Claude Code's old tool name must keep firing for the renamed tool.
_ALIASES = {"Agent": ("Agent", "Task")}


class CommandHook(BaseModel):
    """One shell command run for an event."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    """The shell command; it reads the event's JSON payload on stdin."""
    timeout_s: float = Field(default=60.0, alias="timeout", gt=0)
    """Seconds before the command's process group is killed."""


class HookMatcher(BaseModel):
    """A matcher group: which tools it applies to, and the commands it runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    matcher: str = ""
    """Tool-name pattern (regex, whole name); ``""`` or ``*`` matches everything."""
    hooks: list[CommandHook] = Field(default_factory=list)

    @field_validator("matcher")
    @classmethod
    def _valid_regex(cls, value: str) -> str:
        # An invalid pattern fails loading, not the first tool call.
        if value not in ("", "*"):
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {value!r}: {exc}") from None
        return value

    def matches(self, tool_name: str | None) -> bool:
        """Events without a tool (Stop, SessionStart, ...) ignore the matcher."""
        if tool_name is None or self.matcher in ("", "*"):
            return True
        names = _ALIASES.get(tool_name, (tool_name,))
        return any(re.fullmatch(self.matcher, name) for name in names)


HookConfig = dict[str, list[HookMatcher]]
"""Matcher groups per event name."""


def parse_hooks(raw: Any, source: str) -> HookConfig:
    """Validate a ``hooks`` mapping; any mistake is a :class:`UserError` naming ``source`` and the field."""
    if not raw:
        return {}
    if not isinstance(raw, dict):
        raise UserError(f"{source}: field 'hooks' must map event names to lists, not {type(raw).__name__}")
    return {event: _parse_event(event, groups, source) for event, groups in raw.items()}


def _parse_event(event: str, groups: Any, source: str) -> list[HookMatcher]:
    if event not in EVENTS:
        raise UserError(f"{source}: field 'hooks.{event}': unknown hook event; expected one of {', '.join(EVENTS)}")
    if not isinstance(groups, list):
        raise UserError(f"{source}: field 'hooks.{event}' must be a list of matcher groups")
    return [_parse_group(group, f"hooks.{event}[{i}]", source) for i, group in enumerate(groups)]


def _parse_group(group: Any, where: str, source: str) -> HookMatcher:
    if isinstance(group, dict) and "command" in group and "hooks" not in group:
        # The short frontmatter form: the handler's keys sit beside the matcher.
        handler = {k: v for k, v in group.items() if k != "matcher"}
        group = {"matcher": group.get("matcher", ""), "hooks": [handler]}
    try:
        return HookMatcher.model_validate(group)
    except ValidationError as exc:
        problem = exc.errors()[0]
        field = ".".join([where, *(str(part) for part in problem["loc"])])
        raise UserError(f"{source}: field {field!r}: {problem['msg']}") from None
