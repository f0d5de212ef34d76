"""Running-task records: what the registry knows about every agent run (docs/subagents.md#what-the-parent-gets-back).

Not the team task board (``covey.teams``): a record answers "is this worker
still running, and whom does its result go to?".
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, Field

from covey.model.base import TokenUsage
from covey.model.usage import ModelUsage

Status = Literal["running", "completed", "failed", "killed", "queued"]
"""``queued``: a background launch waiting for a slot: past the concurrency limit (``Limits.queue_spawns``),
or past the background agents at work at once (``Limits.max_active``)."""
Role = Literal["main", "subagent", "teammate", "in_process_teammate"]


class LaunchRequest(BaseModel):
    """What a parent asks the registry to reserve for one child."""

    agent_id: str
    parent_agent_id: str
    owner_agent_id: str | None = None
    """Who gets the completion notification (default: the parent)."""
    depth: int
    description: str
    prompt: str
    agent_type: str
    model: str
    tool_use_id: str | None = None
    cwd: str
    background: bool
    caller_role: Role = "main"
    """The role of the agent that calls Agent (teammates may not spawn everything)."""
    spawns_teammate: bool = False
    team_name: str | None = None
    member_name: str | None = None
    """A teammate's name in its team (or a named agent's name)."""
    type_known: bool = True
    denied_by: tuple[str, str] | None = None
    """(rule, source) of an ``Agent(type)`` deny rule that refuses the type."""
    worktree_with_cwd: bool = False
    cwd_problem: str | None = None
    """Why ``cwd`` / worktree isolation cannot be used, if it cannot."""


class FinalReport(BaseModel):
    """How an agent run ended, as summarised for its owner."""

    status: Status
    text: str
    usage: TokenUsage = Field(default_factory=TokenUsage)
    model_usage: dict[str, ModelUsage] = Field(default_factory=dict)
    """The same tokens and cost per model (the session's ``modelUsage`` sums them)."""
    tool_uses: int = 0
    duration_ms: int = 0
    cost_usd: float = 0.0
    worktree: dict[str, Any] | None = None
    turns: int | None = None
    """Model turns taken (None: unknown, e.g. the actor died)."""
    rate_waits: list[dict[str, Any]] = Field(default_factory=list)
    """Its model requests' waits for the API's rate limit (``covey.runtime.payloads.RateWait``)."""
    delivered_at: float | None = None
    """When the agent put its own notice in its owner's mailbox (one hop instead of two:
    ``AgentRunner``); None if the registry is to deliver it."""


class RunRecord(BaseModel):
    """One agent run as the registry knows it (Claude Code's "running task"): named for the
    run, so that "task" means only a task on a team's board (``covey.teams.tasks.Task``)."""

    agent_id: str
    owner_agent_id: str | None
    parent_agent_id: str | None
    depth: int
    description: str
    prompt: str
    model: str
    agent_type: str
    tool_use_id: str | None = None
    cwd: str
    background: bool = False
    role: Role = "subagent"
    team_name: str | None = None
    member_name: str | None = None
    status: Status = "running"
    started_at: float = Field(default_factory=time.time)
    ended_at: float | None = None
    notified_at: float | None = None
    """When its last notification was in the owner's mailbox (wall clock)."""
    last_activity: float = Field(default_factory=time.monotonic)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    model_usage: dict[str, ModelUsage] = Field(default_factory=dict)
    tool_uses: int = 0
    turns: int = 0
    cost_usd: float = 0.0
    tools_in_flight: list[str] = Field(default_factory=list)
    rate_wait: dict[str, Any] | None = None
    """Its model request waiting for the API's rate limit (``covey.runtime.payloads.RateWait``)."""
    rate_waits: list[dict[str, Any]] = Field(default_factory=list)
    """Its requests' waits that ended (the trace shows them)."""
    summary: str | None = None
    """Its last progress summary (docs/subagents.md#progress-summaries), shown by ``covey ps``."""
    models_used: list[str] = Field(default_factory=list)
    worktree: dict[str, Any] | None = None
    notified: bool = False
    delivering: bool = False
    """Its notice is claimed but not yet in the owner's mailbox (the owner must keep waiting)."""
    notifications: int = 0
    """How many completion notices this task id has produced (a resumed agent notifies again)."""
    runs: int = 0
    """Runs before this one under this task id (a resume starts another): a notice's key counts them."""
    lost_on: list[str] = Field(default_factory=list)
    """The nodes it was lost with, each time it went on from its transcript on another actor."""
    parked: bool = False
    """Its own turn ended, but it waits for background descendants (keepalive)."""
    queued_for: Literal["concurrency", "active"] | None = None
    """Why it was queued: the concurrency limit, or the background agents at work at once."""
    waiting_for: str | None = None
    """Why Ray has not placed its actor yet (it asks for resources no node has free)."""
    seen_seq: dict[str, int] = Field(default_factory=dict)
    """The last sequence number applied per kind of fire-and-forget update ("progress", "parked"):
    Ray may run one caller's calls to an async actor out of order, so an older update is dropped."""
    output_file: str | None = None
    node_id: str | None = None
    report: FinalReport | None = None

    @property
    def live(self) -> bool:
        return self.status == "running"

    @property
    def queued(self) -> bool:
        """Waiting for a slot: not started, not ended (docs/subagents.md#queued-spawns)."""
        return self.status == "queued"

    def newer(self, kind: str, seq: int | None) -> bool:
        """Whether an update is newer than the last one of its kind applied (None: always);
        if so, it is now the last one."""
        if seq is None:
            return True
        if seq <= self.seen_seq.get(kind, 0):
            return False
        self.seen_seq[kind] = seq
        return True

    @property
    def notice_key(self) -> str:
        """Names this run's one notice; the mailbox queues a key once (``notice_key``)."""
        return notice_key(self.agent_id, self.runs)


def notice_key(agent_id: str, runs: int = 0) -> str:
    """The key of the notice that ends run ``runs`` of ``agent_id`` (0: its first run)."""
    return f"{agent_id}#{runs}"
