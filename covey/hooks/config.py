"""Hook configuration models: the events covey runs, matcher groups and their handlers.

Reading them from a settings file or a definition's frontmatter is ``covey.hooks.read``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from covey.common.tool_names import names_of

HookEventName = Literal[
    "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit",
    "Notification", "Stop", "SubagentStart", "SubagentStop", "SessionStart", "SessionEnd", "PreCompact", "PostCompact",
    "Setup", "TaskCreated", "TaskCompleted", "TeammateIdle", "StopFailure", "PostToolBatch", "InstructionsLoaded",
    "WorktreeCreate", "WorktreeRemove", "Interrupt",
]
EVENTS: tuple[str, ...] = get_args(HookEventName)

TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})
"""Events about one tool call: their matcher is a tool name, and only they evaluate a handler's ``if``."""

CLAUDE_CODE_ONLY_EVENTS = (
    "UserPromptExpansion", "PermissionDenied", "MessageDisplay", "ConfigChange", "CwdChanged", "DirectoryAdded",
    "FileChanged", "PreModelSwitch", "PostModelSwitch", "Elicitation", "ElicitationResult",
)
"""Claude Code events covey has no occasion to fire (skipped with a warning that says so)."""

PROMPT_EVENTS = frozenset({
    "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop",
    "SubagentStop", "TaskCreated", "TaskCompleted", "TeammateIdle",
})
"""The events covey fires on which Claude Code runs ``prompt`` and ``agent`` hooks; on the others they are skipped."""

DEFAULT_TIMEOUT_S = 600.0
"""Claude Code's default for command and http hooks."""
PROMPT_TIMEOUT_S = 30.0
"""Claude Code's default for prompt hooks."""
AGENT_TIMEOUT_S = 60.0
"""Claude Code's default for agent hooks."""
MCP_TOOL_TIMEOUT_S = 60.0
"""Claude Code's default for mcp_tool hooks."""
SHORT_TIMEOUT_S = {"UserPromptSubmit": 30.0}
"""Events whose hooks default to a shorter timeout (a stuck one stalls every prompt)."""
SESSION_END_BUDGET_S = 1.5
"""SessionEnd hooks share this budget unless a hook sets a longer ``timeout`` (at most 60 s)."""


class _Handler(BaseModel):
    """What every handler type shares (Claude Code's common handler fields)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    timeout_s: float | None = Field(default=None, alias="timeout", gt=0)
    """Seconds before the hook is cancelled; None: the event's default (``timeout_for``)."""
    if_rule: str | None = Field(default=None, alias="if")
    """A permission rule (``Bash(git *)``): the hook runs only for tool calls it matches;
    on an event that is not about a tool call it never runs, as in Claude Code."""
    status_message: str | None = Field(default=None, alias="statusMessage")
    """Claude Code's spinner text while the hook runs (covey shows no spinner: kept, unused)."""

    def timeout_for(self, event: str) -> float:
        return self.timeout_s if self.timeout_s is not None else SHORT_TIMEOUT_S.get(event, DEFAULT_TIMEOUT_S)


class CommandHook(_Handler):
    """One shell command run for an event."""

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    """The shell command; it reads the event's JSON payload on stdin."""
    args: list[str] | None = None
    """Exec form: ``command`` is the program and these its arguments, no shell involved
    (``${CLAUDE_PROJECT_DIR}`` is replaced in each as plain text)."""
    run_async: bool = Field(default=False, alias="async")
    """Run in the background: the action goes on at once, and what the hook says later
    (``additionalContext``) reaches the model with its next request."""
    async_rewake: bool = Field(default=False, alias="asyncRewake")
    """In the background too; its exit-2 stderr reaches the model with its next request
    (covey does not wake an idle agent for it, as Claude Code does)."""
    shell: Literal["bash", "powershell"] | None = None
    """Claude Code's shell choice: ``bash`` is the POSIX shell covey runs; ``powershell`` is refused on read."""

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @property
    def background(self) -> bool:
        return self.run_async or self.async_rewake

    @property
    def key(self) -> str:
        """What makes two handlers the same one (Claude Code runs a duplicate once)."""
        return f"command:{self.command}" + (f":{self.args}" if self.args is not None else "")


class HttpHook(_Handler):
    """The event's JSON payload POSTed to a URL; the response body answers like a command's stdout."""

    type: Literal["http"] = "http"
    url: str = Field(min_length=1, pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra headers; ``$VAR`` / ``${VAR}`` in a value is replaced for the names in ``allowedEnvVars`` only."""
    allowed_env_vars: list[str] = Field(default_factory=list, alias="allowedEnvVars")

    @property
    def command(self) -> str:
        """What logs and warnings call it."""
        return f"POST {self.url}"

    @property
    def key(self) -> str:
        return f"http:{self.url}"


class CallbackHook(_Handler):
    """A claude-agent-sdk hook: the SDK client runs its Python callback (``hook_callback``
    over the control protocol) and answers as a command hook prints its JSON."""

    type: Literal["callback"] = "callback"
    callback_id: str = Field(min_length=1)

    def timeout_for(self, event: str) -> float:
        return self.timeout_s if self.timeout_s is not None else 60.0  # the SDK's HookMatcher default

    @property
    def command(self) -> str:
        """What logs and warnings call it (a command hook's command)."""
        return f"SDK hook callback {self.callback_id}"

    @property
    def key(self) -> str:
        return f"callback:{self.callback_id}"


class _AskedHook(_Handler):
    """What a ``prompt`` and an ``agent`` hook share: a prompt a model judges, and that model."""

    type: str
    prompt: str = Field(min_length=1)
    """What to judge; ``$ARGUMENTS`` is replaced by the payload's JSON (without it, the JSON is appended)."""
    model: str | None = None
    """The model that judges (an alias or an id); None: Haiku, Claude Code's fast model."""

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @property
    def command(self) -> str:
        """What logs and warnings call it."""
        return f"{self.type} {self.prompt[:60]!r}"

    @property
    def key(self) -> str:
        return f"{self.type}:{self.model}:{self.prompt}"


class PromptHook(_AskedHook):
    """The event's payload and a prompt sent to a small fast model, which answers ``{"ok": true}``
    or ``{"ok": false, "reason": ...}`` (``covey.hooks.prompt``)."""

    type: Literal["prompt"] = "prompt"

    def timeout_for(self, event: str) -> float:
        return self.timeout_s if self.timeout_s is not None else PROMPT_TIMEOUT_S


class AgentHook(_AskedHook):
    """A verifier agent given the prompt and the payload: it may Read, Grep and Glob the project
    for up to 50 turns, then answers as a prompt hook's model does (``covey.hooks.verifier``, run by ``covey.hooks.agent_hook``)."""

    type: Literal["agent"] = "agent"

    def timeout_for(self, event: str) -> float:
        return self.timeout_s if self.timeout_s is not None else AGENT_TIMEOUT_S


class McpToolHook(_Handler):
    """A tool of an MCP server the agent is connected to, called with ``input`` (its ``${path}``
    strings filled from the event's payload); the tool's text answers like a command's stdout
    (``covey.hooks.mcp_tool``)."""

    type: Literal["mcp_tool"] = "mcp_tool"
    server: str = Field(min_length=1)
    """The server's configured name; it must already be connected (the hook never starts it)."""
    tool: str = Field(min_length=1)
    """The tool's name on that server (without ``mcp__<server>__``)."""
    input: dict[str, Any] = Field(default_factory=dict)
    """The tool's arguments; ``"${tool_input.file_path}"`` in a string is replaced from the payload."""

    def timeout_for(self, event: str) -> float:
        return self.timeout_s if self.timeout_s is not None else MCP_TOOL_TIMEOUT_S

    @property
    def command(self) -> str:
        """What logs and warnings call it."""
        return f"mcp_tool {self.server}/{self.tool}"

    @property
    def key(self) -> str:
        return f"mcp_tool:{self.server}:{self.tool}:{sorted(self.input.items())!r}"


Handler = Annotated[Union[CommandHook, HttpHook, CallbackHook, PromptHook, AgentHook, McpToolHook],
                    Field(discriminator="type")]

_EXACT = re.compile(r"[A-Za-z0-9_\- ,|]*")


class HookMatcher(BaseModel):
    """A matcher group: what it applies to (a tool, a session source, an agent type...), and its handlers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    matcher: str = ""
    """``""`` or ``*``: everything. Only letters, digits, ``_ - , |`` and spaces: exact names
    separated by ``|`` or ``,``. Anything else: a regular expression, unanchored (Claude Code's rules)."""
    hooks: list[Handler] = Field(default_factory=list)

    @field_validator("matcher")
    @classmethod
    def _valid_regex(cls, value: str) -> str:
        # An invalid pattern fails loading, not the first tool call.
        if value.strip() != "*" and not _EXACT.fullmatch(value):
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {value!r}: {exc}") from None
        return value

    def matches(self, value: str | None, *, tool: bool = False) -> bool:
        """``value``: what the event matches on (None: an event without matcher support)."""
        if value is None or self.matcher.strip() in ("", "*"):
            return True
        names = names_of(value) if tool else (value,)  # a matcher written for ``Task`` fires for ``Agent``
        if _EXACT.fullmatch(self.matcher):
            wanted = {part.strip() for part in re.split(r"[|,]", self.matcher) if part.strip()}
            return any(name in wanted for name in names)
        return any(re.search(self.matcher, name) for name in names)


HookConfig = dict[str, list[HookMatcher]]
"""Matcher groups per event name."""
