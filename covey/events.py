"""Events an agent run emits, shaped like Claude Code's print-mode stream-json.

``event.wire()`` is the JSON object Claude Code 2.1.332 would print for it (the
recorded runs in ``tests/data/claude_code`` are the reference), so tools that read
Claude Code's ``--output-format stream-json`` read covey's too. Events are pydantic
models so they cross actor boundaries intact.
"""

from __future__ import annotations

import uuid as _uuid
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from covey.model.usage import ModelUsage

CLAUDE_CODE_VERSION = "2.1.332"
"""The Claude Code whose print-mode protocol covey speaks (``system/init``'s ``claude_code_version``)."""


def new_uuid() -> str:
    return str(_uuid.uuid4())


def now_iso() -> str:
    """The current time as Claude Code writes it: ISO 8601, UTC, milliseconds, ``Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@lru_cache(maxsize=1)
def covey_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("covey")
    except PackageNotFoundError:
        return "unknown"


class Event(BaseModel):
    type: str
    session_id: str = ""
    agent_id: str | None = None
    """The agent that emitted it. On the wire only where Claude Code has it: a child's messages."""
    uuid: str = Field(default_factory=new_uuid)

    nullable: ClassVar[frozenset[str]] = frozenset()
    """Fields written as ``null`` when unset (Claude Code writes them); others are left out."""

    def wire(self) -> dict[str, Any]:
        data = self.model_dump(by_alias=True, exclude={"agent_id"})
        return {key: value for key, value in data.items() if value is not None or key in self.nullable}


class StreamEvent(Event):
    """One raw Messages API stream event of the main agent's reply (``--include-partial-messages``)."""

    type: Literal["stream_event"] = "stream_event"
    event: dict[str, Any]
    parent_tool_use_id: str | None = None

    nullable: ClassVar[frozenset[str]] = frozenset({"parent_tool_use_id"})


class SystemInit(Event):
    """``system/init``: what the run has. The session fills what it knows; the defaults are
    covey's own answers where it has no such feature (no MCP servers, plugins, fast mode...)."""

    type: Literal["system"] = "system"
    subtype: Literal["init"] = "init"
    cwd: str
    tools: list[str]
    mcp_servers: list[dict[str, Any]] = Field(default_factory=list)
    model: str
    permissionMode: str
    slash_commands: list[str] = Field(default_factory=list)
    terminal_slash_commands: list[str] = Field(default_factory=list)
    apiKeySource: str = "none"
    """Where the API key came from: ``ANTHROPIC_API_KEY`` (the environment), ``none``."""
    claude_code_version: str = CLAUDE_CODE_VERSION
    covey_version: str = Field(default_factory=covey_version)
    output_style: str = "default"
    agents: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    plugins: list[dict[str, Any]] = Field(default_factory=list)
    capabilities: list[str] = Field(default_factory=list)
    """Claude Code's protocol extensions the runtime supports: covey claims none."""
    analytics_disabled: bool = True
    product_feedback_disabled: bool = True
    served_by_anthropic: bool = False
    sandbox_enabled: bool = False
    original_cwd: str | None = None
    """The cwd the run started in (default: ``cwd``)."""
    additional_directories: list[str] = Field(default_factory=list)
    fast_mode_state: str = "off"
    fast_mode_disabled_reason: str = "unknown"
    per_turn_effort_active: bool = False
    ultrathink_available: bool = False
    ultrathink_typed_raises: bool = False
    view_mode: str = "default"

    def wire(self) -> dict[str, Any]:
        data = super().wire()
        data["original_cwd"] = self.original_cwd or self.cwd
        return data


class _Message(Event):
    """An assistant or user message of the conversation (the main agent's or a child's)."""

    message: dict[str, Any]
    parent_tool_use_id: str | None = None
    """The Agent tool_use that started the child that said it; None for the main agent."""
    timestamp: str = Field(default_factory=now_iso)
    subagent_type: str | None = None
    """A child's agent type and its Agent call's description (Claude Code's ``task_description``)."""
    task_description: str | None = None

    nullable: ClassVar[frozenset[str]] = frozenset({"parent_tool_use_id"})

    def wire(self) -> dict[str, Any]:
        data = super().wire()
        if self.parent_tool_use_id is not None and self.agent_id is not None:
            data["agent_id"] = self.agent_id
        return data


class AssistantEvent(_Message):
    type: Literal["assistant"] = "assistant"
    request_id: str | None = None
    """The API response's request id (Claude Code's ``request_id``), when the model gave one."""


class UserEvent(_Message):
    type: Literal["user"] = "user"
    tool_use_result: Any = None
    """The structured result of the call answered here (Claude Code's ``toolUseResult``): the
    Agent tool's output, ``"Error: ..."`` for a failed call; absent where covey has none."""


class TaskStarted(Event):
    type: Literal["system"] = "system"
    subtype: Literal["task_started"] = "task_started"
    task_id: str
    run_id: str
    tool_use_id: str | None = None
    description: str
    subagent_type: str | None = None
    is_backgrounded: bool
    spawn_depth: int
    task_type: str = "local_agent"
    prompt: str


class TaskUsage(BaseModel):
    total_tokens: int = 0
    tool_uses: int = 0
    duration_ms: int = 0


class TaskUpdated(Event):
    """A task's state changed (Claude Code sends it right before the task's notification)."""

    type: Literal["system"] = "system"
    subtype: Literal["task_updated"] = "task_updated"
    task_id: str
    run_id: str
    patch: dict[str, Any]
    """``status`` and ``end_time`` (epoch milliseconds)."""


class TaskNotification(Event):
    type: Literal["system"] = "system"
    subtype: Literal["task_notification"] = "task_notification"
    task_id: str
    run_id: str
    tool_use_id: str | None = None
    status: str
    output_file: str | None = None
    """The child's transcript."""
    summary: str
    summary_is_report: bool | None = None
    """True when ``summary`` is the background child's report itself (it completed)."""
    usage: TaskUsage = Field(default_factory=TaskUsage)


class BackgroundTask(BaseModel):
    task_id: str
    run_id: str
    task_type: str = "local_agent"
    subagent_type: str | None = None
    description: str


class BackgroundTasksChanged(Event):
    """The agent's running background tasks, after one started or ended."""

    type: Literal["system"] = "system"
    subtype: Literal["background_tasks_changed"] = "background_tasks_changed"
    tasks: list[BackgroundTask] = Field(default_factory=list)


class CompactBoundary(Event):
    """``system/compact_boundary``: the conversation was compacted (docs/compaction.md). On the wire
    as Claude Code prints it; the summary and what came back with it travel for the transcript."""

    type: Literal["system"] = "system"
    subtype: Literal["compact_boundary"] = "compact_boundary"
    compact_metadata: dict[str, Any]
    """``trigger`` (``auto`` or ``manual``) and ``pre_tokens`` (the context before it)."""
    context: list[dict[str, Any]] = Field(default_factory=list, exclude=True)
    """The agent's project context, put back before the summary."""
    summary: dict[str, Any] = Field(default_factory=dict, exclude=True)
    """The user message with the summary (the transcript marks it ``isCompactSummary``)."""
    attachments: list[dict[str, Any]] = Field(default_factory=list, exclude=True)
    """Content blocks that follow the summary: files read again, SessionStart context."""
    usage: dict[str, Any] = Field(default_factory=dict, exclude=True)
    """The summary request's token usage (its cost counts)."""
    model: str | None = Field(default=None, exclude=True)


class PermissionDenied(Event):
    """A tool call was refused by the permission rules or mode (the model reads ``message``)."""

    type: Literal["system"] = "system"
    subtype: Literal["permission_denied"] = "permission_denied"
    tool_name: str
    tool_use_id: str | None = None
    message: str


class McpServerFailed(Event):
    """covey's own: an MCP server of this agent failed to start or connect; the agent goes on
    without its tools (``message`` names it and ends with its stderr)."""

    type: Literal["system"] = "system"
    subtype: Literal["mcp_server_failed"] = "mcp_server_failed"
    server: str
    message: str


class PermissionPrompt(Event):
    """An agent that bubbles permission prompts asks the root (terminal or callback)."""

    type: Literal["system"] = "system"
    subtype: Literal["permission_request"] = "permission_request"
    request_id: str
    tool_name: str
    subject: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    message: str = ""
    reason: str = ""
    """Why the policy asks (an ask rule, the mode, a hook)."""
    tool_use_id: str | None = None
    """The call's tool_use id."""


ResultSubtype = Literal["success", "error_max_turns", "error_during_execution"]
TerminalReason = Literal["completed", "max_turns", "model_error", "api_error", "hook_stopped"]


class ResultEvent(Event):
    type: Literal["result"] = "result"
    subtype: ResultSubtype
    is_error: bool
    result: str
    """The final text, or why the run ended (also in ``errors``)."""
    num_turns: int
    """Model requests in this turn (since the previous result), as Claude Code counts them."""
    duration_ms: int
    """This turn's wall time."""
    duration_api_ms: int
    """Time spent waiting for the model over the whole run."""
    total_cost_usd: float
    """The main agent's result: what the whole session spent (every agent), like Claude Code's."""
    usage: dict[str, int]
    """This agent's own tokens in this turn (``TokenUsage`` fields; on the wire with Claude Code's keys, ``wire_usage``)."""
    modelUsage: dict[str, ModelUsage] = Field(default_factory=dict)
    """The main agent's result: the session's tokens and cost per model (every agent)."""
    stop_reason: str | None = None
    """The last reply's API stop reason (``end_turn``, ``tool_use``, ``max_tokens``, ...)."""
    terminal_reason: TerminalReason | None = None
    """Why the loop ended, in Claude Code's words."""
    permission_denials: list[dict[str, Any]] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    """Why a run ended in error (empty on success)."""
    api_error_status: int | None = None
    """The HTTP status of the API error that ended the run, if one did."""
    fast_mode_state: str = "off"
    fast_mode_disabled_reason: str = "unknown"
    safety_stops: int = 0
    queued_turn_count: int = 0
    result_index: int = 0
    origin: dict[str, Any] | None = None
    """What woke a turn that no prompt started: ``{"kind": "task-notification", "producer":
    "session-task", "runId": the task's run id}`` for a background agent's notification."""
    """0 for the run's first result, 1 for the next turn's (a notification's), ..."""

    nullable: ClassVar[frozenset[str]] = frozenset({"stop_reason", "api_error_status"})

    def wire(self) -> dict[str, Any]:
        data = super().wire()
        data["usage"] = wire_usage(self.usage)
        if self.is_error and self.api_error_status is None:
            del data["api_error_status"]  # Claude Code's error results carry it only for an API error
        return data

    @classmethod
    def failure(cls, message: str, **fields: Any) -> "ResultEvent":
        """The result of a run that ended on an error before the loop could report one."""
        figures = {"num_turns": 0, "duration_ms": 0, "duration_api_ms": 0, "total_cost_usd": 0.0, "usage": {}}
        return cls(subtype="error_during_execution", is_error=True, result=message, errors=[message],
                   **{**figures, **fields})


def wire_usage(tokens: dict[str, int]) -> dict[str, Any]:
    """Token counts (``TokenUsage`` fields) as a result's ``usage``, with Claude Code's keys.

    covey sends no server tools, requests no fast mode or priority tier and caches with
    the default (5 minute) ephemeral breakpoints, so those parts are what they say."""
    created = tokens.get("cache_creation_input_tokens", 0)
    return {
        "input_tokens": tokens.get("input_tokens", 0),
        "cache_creation_input_tokens": created,
        "cache_read_input_tokens": tokens.get("cache_read_input_tokens", 0),
        "output_tokens": tokens.get("output_tokens", 0),
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": created},
        "iterations": [],
        "speed": "standard",
        "fallback_credit": None,
    }


def token_count(usage: dict[str, Any]) -> int:
    """The tokens of a ``usage`` object (input, output and cache)."""
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return sum(int(usage.get(key) or 0) for key in keys)
