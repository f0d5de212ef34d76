"""What travels through a mailbox: a discriminated union on ``kind`` (STYLE 6)."""

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


class TaskNotice(_Mail):
    """A background agent ended: the rendered ``<task-notification>`` for its owner."""

    kind: Literal["task-notification"] = "task-notification"
    task_id: str
    status: str
    text: str
    """The user-message text the owner's next turn reads."""
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
