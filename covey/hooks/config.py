"""Hook configuration models: the events covey runs, matcher groups and command handlers.

Reading them from a settings file or a definition's frontmatter is ``covey.hooks.read``.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from covey.tool_names import names_of

HookEvent = Literal[
    "PreToolUse", "PostToolUse", "Stop", "SubagentStop", "SessionStart", "UserPromptSubmit", "Notification",
]
EVENTS: tuple[str, ...] = get_args(HookEvent)



class CommandHook(BaseModel):
    """One shell command run for an event."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    """The shell command; it reads the event's JSON payload on stdin."""
    timeout_s: float = Field(default=60.0, alias="timeout", gt=0)
    """Seconds before the command's process group is killed."""

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


class CallbackHook(BaseModel):
    """A claude-agent-sdk hook: the SDK client runs its Python callback (``hook_callback``
    over the control protocol) and answers as a command hook prints its JSON."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    type: Literal["callback"] = "callback"
    callback_id: str = Field(min_length=1)
    timeout_s: float = Field(default=60.0, alias="timeout", gt=0)

    @property
    def command(self) -> str:
        """What logs and warnings call it (a command hook's command)."""
        return f"SDK hook callback {self.callback_id}"


Handler = Annotated[Union[CommandHook, CallbackHook], Field(discriminator="type")]


class HookMatcher(BaseModel):
    """A matcher group: which tools it applies to, and the commands it runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    matcher: str = ""
    """Tool-name pattern (regex, whole name); ``""`` or ``*`` matches everything."""
    hooks: list[Handler] = Field(default_factory=list)

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
        names = names_of(tool_name)  # a matcher written for ``Task`` fires for ``Agent``
        return any(re.fullmatch(self.matcher, name) for name in names)


HookConfig = dict[str, list[HookMatcher]]
"""Matcher groups per event name."""
