"""What an agent loop is given: its settings (``LoopConfig``) and where its notifications arrive (``Inbox``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


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
    task_budget: int | None = None
    """The session's task budget in tokens (``--task-budget``); sent to the models that take it."""
    betas: list[str] = field(default_factory=list)
    """Beta headers every request carries (``--betas``)."""
    wait_for_background: bool = True
    """Non-interactive runs take another turn per notification instead of ending (docs/subagents.md#faults)."""
    mail_before_first_turn: bool = True
    """Look at the inbox before the first request. A fresh agent has nothing there yet (no one
    knows its id before it runs), so it skips that round trip; a resumed one must look."""
    tool_result_reminder: str | None = None
    """Text appended after every batch of tool results (Verification's critical reminder)."""
    partial_messages: bool = False
    """Yield each raw stream event of a reply as a ``StreamEvent`` while it arrives."""
    tools: list[dict[str, Any]] | None = None
    """The tools array to send as is (a fork's: its parent's bytes); None: the executor's tools' schemas."""
    inherited: int = 0
    """How many first messages a fork inherited: the last of them carries a cache breakpoint, so
    sibling forks read the prefix the first one wrote (docs/subagents.md#caching)."""
