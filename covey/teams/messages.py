"""What travels through a mailbox: a discriminated union on ``kind``, so each kind crosses an actor boundary as its own type."""

from __future__ import annotations

import time
import uuid
from typing import Annotated, Literal, Union

from pydantic import BaseModel, Field


def _message_id() -> str:
    return f"msg-{uuid.uuid4().hex[:12]}"


class _Mail(BaseModel):
    message_id: str = Field(default_factory=_message_id)
    sent_at: float = Field(default_factory=time.time)
    arrived_at: float | None = None
    """When the mailbox queued it for its recipient (set by ``put``; wall clock)."""


class NoticeUsage(BaseModel):
    """What a background agent spent, as its notice reports it."""

    total_tokens: int = 0
    tool_uses: int = 0
    duration_ms: int = 0


class NoticeWorktree(BaseModel):
    """A child's worktree kept because it holds changes."""

    path: str | None = None
    branch: str | None = None


class ReleasedTask(BaseModel):
    """A board task an ended teammate held, back to pending and unowned."""

    id: str
    subject: str


class TaskNotice(_Mail):
    """A background task ended: its fields, for its owner. ``render_notice``
    (covey/teams/render.py) writes the ``<task-notification>`` text the owner's model
    reads; nothing parses that text back. A background agent's notice carries its report
    (``result``, ``usage``); a background shell's carries neither."""

    kind: Literal["task-notification"] = "task-notification"
    task_id: str
    status: str
    task_type: Literal["local_agent", "local_bash"] = "local_agent"
    """An agent (its summary and report are model-written and quoted) or a background shell."""
    summary: str = ""
    """One line: ``Agent "..." finished``, ``Background command "..." failed (exit code 1)``."""
    tool_use_id: str | None = None
    output_file: str | None = None
    result: str | None = None
    """The agent's final report as it wrote it (None: a shell, whose output is in its file)."""
    worktree: NoticeWorktree | None = None
    usage: NoticeUsage | None = None
    released: list[ReleasedTask] = Field(default_factory=list)
    """An ended teammate's unfinished board tasks, for its lead to reassign."""
    key: str = ""
    """``agent_id#runs`` (``notice_key``): the mailbox queues one notice per key, whoever sends it."""


class TeammateMessage(_Mail):
    """An ordinary message from another agent (SendMessage)."""

    kind: Literal["message"] = "message"
    sender: str
    sender_id: str | None = None
    text: str
    summary: str | None = None


class ShutdownRequest(_Mail):
    """Asks the recipient to finish up and stop; drained before anything else."""

    kind: Literal["shutdown_request"] = "shutdown_request"
    sender: str
    reason: str = ""


class UserMessage(_Mail):
    """A message from the person (an SDK client's next ``user`` line) that came while the
    main agent was working: its next turn reads it as it was written."""

    kind: Literal["user"] = "user"
    text: str


Mail = Annotated[Union[TaskNotice, TeammateMessage, ShutdownRequest, UserMessage], Field(discriminator="kind")]
