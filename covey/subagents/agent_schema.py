"""The Agent tool's input and output (docs/subagents.md#the-call, docs/subagents.md#what-the-parent-gets-back).

The input schema is shaped by configuration: a field the model may not use is
absent from the schema, not forbidden in prose. Each shape is built once.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal, Optional, Union, cast

from pydantic import BaseModel, Field, create_model, model_validator

from covey.permissions.modes import AgentToolMode
from covey.tools.base import ToolInput

ModelAlias = Literal["sonnet", "opus", "haiku", "fable"]

_FIELDS: dict[str, tuple[Any, Any]] = {
    "description": (str, Field(description="A short (3-5 word) summary of the task.")),
    "prompt": (str, Field(description="The task for the agent: everything it needs to know, since it sees none of your conversation.")),
    "subagent_type": (Optional[str], Field(default=None, description="Which agent type to use (see the agent list)." )),
    "model": (Optional[ModelAlias], Field(default=None, description="Model override for this agent.")),
    "effort": (Optional[Literal["low", "medium", "high", "xhigh", "max"]], Field(default=None, description="Reasoning effort.")),
    "run_in_background": (Optional[bool], Field(default=None, description="Run in the background; you get a notification when it ends.")),
    "name": (Optional[str], Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$", description="Teammate name (with team_name).")),
    "team_name": (Optional[str], Field(default=None, description="The team the named agent joins.")),
    "mode": (Optional[AgentToolMode], Field(default=None, description="Permission mode for the agent.")),
    "isolation": (Optional[str], Field(default=None, description="\"worktree\": work in a temporary git worktree.")),
    "cwd": (Optional[str], Field(default=None, description="Absolute working directory for the agent.")),
}


_FORK_FIELDS: dict[str, tuple[Any, Any]] = {
    "prompt": (str, Field(description="The task. A fork knows this conversation: give it one directive. An agent of a named type sees none of it: give it everything it needs.")),
    "subagent_type": (Optional[str], Field(default=None, description="Which agent type to use (see the agent list). Omit it to fork yourself: the fork starts from this conversation.")),
}


@lru_cache(maxsize=None)
def agent_input_model(*, background: bool = True, teams: bool = False, remote: bool = False,
                      fork: bool = False) -> type[ToolInput]:
    """The input model for one configuration (cached: the schema bytes stay identical).
    With forking on, every fork runs in the background: ``run_in_background`` is gone."""
    fields = dict(_FIELDS)
    if fork:
        fields.update(_FORK_FIELDS)
    if not background or fork:
        fields.pop("run_in_background")
    if not teams:  # Claude Code offers `mode` only with teams; a more permissive one is asked about anyway
        fields.pop("name")
        fields.pop("team_name")
        fields.pop("mode")
    isolation = Literal["worktree", "remote"] if remote else Literal["worktree"]
    fields["isolation"] = (Optional[isolation], fields["isolation"][1])
    name = f"AgentInput{'B' if background else ''}{'T' if teams else ''}{'R' if remote else ''}{'F' if fork else ''}"
    base = ToolInput if teams else _NoModeInput
    # The field map as Any: mypy would match its tuples against create_model's own keywords too.
    return create_model(name, __base__=base, **cast(dict[str, Any], fields))


class _NoModeInput(ToolInput):
    """Without teams the schema has no ``mode``; a call that sends one reads why, naming the mode."""

    @model_validator(mode="before")
    @classmethod
    def _no_mode(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("mode") is not None:
            raise ValueError(
                f"mode {data['mode']!r} cannot be set on an Agent call here (Claude Code offers it only with "
                "teams): the child runs in your mode or its definition's permissionMode, and one more "
                "permissive than yours needs a person's approval. Call Agent again without mode.")
        return data


class _Output(BaseModel):
    agentId: str


class Completed(_Output):
    """A sync child's end; ``wire()`` is Claude Code's ``tool_use_result`` for it."""

    status: Literal["completed"] = "completed"
    content: str
    """The child's final text (on the wire: a list of one text block, as Claude Code's)."""
    totalTokens: int
    totalToolUseCount: int
    totalDurationMs: int
    resolvedModel: str
    worktree: dict[str, Any] | None = None
    prompt: str = ""
    agentType: str = ""
    usage: dict[str, Any] | None = None
    """The child's tokens, with the keys of a result's ``usage``."""
    canContinueAgent: bool = True
    """SendMessage to its id resumes it from its transcript."""

    def wire(self) -> dict[str, Any]:
        data = self.model_dump(exclude_none=True)
        return {**data, "content": [{"type": "text", "text": self.content}]}


class AsyncLaunched(_Output):
    """A background launch; ``wire()`` is Claude Code's ``tool_use_result`` for it."""

    status: Literal["async_launched"] = "async_launched"
    isAsync: bool = True
    description: str
    prompt: str
    resolvedModel: str
    outputFile: str | None = None
    canReadOutputFile: bool = True
    """The output file is the child's transcript, a file the parent's tools can read."""
    canContinueAgent: bool = True

    def wire(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class TeammateSpawned(_Output):
    status: Literal["teammate_spawned"] = "teammate_spawned"
    name: str
    team_name: str
    color: str | None = None


class RemoteLaunched(_Output):
    status: Literal["remote_launched"] = "remote_launched"
    description: str
    submission_id: str


AgentOutput = Annotated[Union[Completed, AsyncLaunched, TeammateSpawned, RemoteLaunched], Field(discriminator="status")]
