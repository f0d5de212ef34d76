"""The ``system`` events: the run's ``init``, a task's life (started, progress, updated, notified, the
background tasks), a compaction's boundary, a permission denied or asked, an MCP server that failed."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from covey.events.base import CLAUDE_CODE_VERSION, Event, covey_version


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


class TaskProgress(Event):
    """``system/task_progress``: a sub-agent at work. Claude Code sends one after each of
    the agent's replies that calls tools (``last_tool_name``; ``description`` what that call does) and, with
    ``agentProgressSummaries`` on, one per progress summary (``summary``, also as ``description``)."""

    type: Literal["system"] = "system"
    subtype: Literal["task_progress"] = "task_progress"
    task_id: str
    run_id: str | None = None
    tool_use_id: str | None = None
    description: str
    subagent_type: str | None = None
    usage: TaskUsage = Field(default_factory=TaskUsage)
    """The agent's own figures so far: its tokens, tool calls, and time since it started."""
    last_tool_name: str | None = None
    summary: str | None = None


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


class HookEvent(Event):
    """A hook's run, as ``--include-hook-events`` shows it: ``hook_started`` when it begins,
    ``hook_response`` with what it said when it ends (claude-agent-sdk's ``HookEventMessage``)."""

    type: Literal["system"] = "system"
    subtype: Literal["hook_started", "hook_response"]
    hook_id: str
    hook_name: str
    """The event and what it matched on: ``PreToolUse:Bash``, ``Stop``."""
    hook_event: str
    output: str | None = None
    """hook_response: its JSON or plain output as covey read it."""
    exit_code: int | None = None
    """hook_response: 0, 2 for a block, 1 for a failure."""
    outcome: Literal["success", "error"] | None = None
