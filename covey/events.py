"""Events an agent run emits, shaped like Claude Code's print-mode stream-json.

``event.wire()`` is the JSON object Claude Code would print for it, so tools that
read Claude Code's ``--output-format stream-json`` read covey's too. Events are
pydantic models so they cross actor boundaries intact.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from covey.model.usage import ModelUsage


class Event(BaseModel):
    type: str
    session_id: str = ""
    agent_id: str | None = None
    """The agent that emitted it (None or the main agent's id for the main agent)."""

    def wire(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True, by_alias=True)


class SystemInit(Event):
    type: Literal["system"] = "system"
    subtype: Literal["init"] = "init"
    cwd: str
    model: str
    tools: list[str]
    permissionMode: str
    agents: list[str] = Field(default_factory=list)


class AssistantEvent(Event):
    type: Literal["assistant"] = "assistant"
    message: dict[str, Any]
    parent_tool_use_id: str | None = None


class UserEvent(Event):
    type: Literal["user"] = "user"
    message: dict[str, Any]
    parent_tool_use_id: str | None = None


class TaskStarted(Event):
    type: Literal["system"] = "system"
    subtype: Literal["task_started"] = "task_started"
    task_id: str
    tool_use_id: str | None = None
    description: str
    subagent_type: str | None = None


class TaskNotification(Event):
    type: Literal["system"] = "system"
    subtype: Literal["task_notification"] = "task_notification"
    task_id: str
    status: str
    summary: str
    output_file: str | None = None


class PermissionPrompt(Event):
    """An agent that bubbles permission prompts asks the root (terminal or callback)."""

    type: Literal["system"] = "system"
    subtype: Literal["permission_request"] = "permission_request"
    request_id: str
    tool_name: str
    subject: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    message: str = ""


ResultSubtype = Literal["success", "error_max_turns", "error_during_execution"]


class ResultEvent(Event):
    type: Literal["result"] = "result"
    subtype: ResultSubtype
    is_error: bool
    result: str
    num_turns: int
    duration_ms: int
    duration_api_ms: int
    total_cost_usd: float
    """The main agent's result: what the whole session spent (every agent), like Claude Code's."""
    usage: dict[str, int]
    """This agent's own tokens."""
    modelUsage: dict[str, ModelUsage] = Field(default_factory=dict)
    """The main agent's result: the session's tokens and cost per model (every agent)."""
    stop_reason: str | None = None
    permission_denials: list[dict[str, Any]] = Field(default_factory=list)
    errors: list[str] | None = None
    """Why a run ended in error (Claude Code's error results carry this list)."""

    @classmethod
    def failure(cls, message: str, **fields: Any) -> "ResultEvent":
        """The result of a run that ended on an error before the loop could report one."""
        figures = {"num_turns": 0, "duration_ms": 0, "duration_api_ms": 0, "total_cost_usd": 0.0, "usage": {}}
        return cls(subtype="error_during_execution", is_error=True, result=message, errors=[message],
                   **{**figures, **fields})
