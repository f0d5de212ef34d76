"""What the task board stores and answers (docs/teams.md): tasks, patches, claim and update results.

Results are discriminated unions on ``kind`` so that a refusal crosses
the actor boundary as data, never as an exception that a caller must catch.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

TaskStatus = Literal["pending", "in_progress", "completed"]

ClaimReason = Literal[
    "task_not_found", "already_claimed", "already_resolved", "blocked", "agent_busy",
    "no_task_available",
]
"""Why a claim was refused; ``no_task_available`` is only answered by ``claim_next``."""


class Task(BaseModel):
    """One collaborative task. ``blocks`` / ``blocked_by`` hold task ids (always both ends)."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    subject: str
    description: str
    active_form: str | None = Field(default=None, alias="activeForm")
    status: TaskStatus = "pending"
    owner: str | None = None
    blocks: list[str] = Field(default_factory=list)
    blocked_by: list[str] = Field(default_factory=list, alias="blockedBy")
    metadata: dict[str, Any] = Field(default_factory=dict)


class TaskPatch(BaseModel):
    """A TaskUpdate: fields left ``None`` stay as they are.

    ``owner=""`` makes the task unowned; a ``metadata`` key set to ``None`` is deleted.
    """

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    subject: str | None = None
    description: str | None = None
    active_form: str | None = Field(default=None, alias="activeForm")
    status: TaskStatus | Literal["deleted"] | None = None
    owner: str | None = None
    metadata: dict[str, Any] | None = None
    add_blocks: list[str] = Field(default_factory=list, alias="addBlocks")
    """Tasks that cannot start until this one is completed."""
    add_blocked_by: list[str] = Field(default_factory=list, alias="addBlockedBy")
    """Tasks that must be completed before this one can start."""


class Claimed(BaseModel):
    kind: Literal["claimed"] = "claimed"
    task: Task
    """The task as written: owner set, status ``in_progress``."""


class ClaimRefused(BaseModel):
    kind: Literal["refused"] = "refused"
    reason: ClaimReason
    task_id: str | None
    message: str


ClaimResult = Annotated[Union[Claimed, ClaimRefused], Field(discriminator="kind")]


class Updated(BaseModel):
    kind: Literal["updated"] = "updated"
    task: Task
    changed: list[str]
    """Wire names of the fields the patch actually changed (``status``, ``owner``, ``addBlocks`` ...)."""


class Deleted(BaseModel):
    kind: Literal["deleted"] = "deleted"
    task: Task
    """The task as it was; its dependency edges are gone from the other tasks too."""


class UpdateError(BaseModel):
    """The patch was refused as a whole: nothing of it was written."""

    kind: Literal["error"] = "error"
    reason: Literal["task_not_found", "invalid_patch", "unknown_dependency", "self_dependency", "cycle"]
    task_id: str
    message: str


UpdateResult = Annotated[Union[Updated, Deleted, UpdateError], Field(discriminator="kind")]
