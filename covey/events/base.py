"""The base of every event (``Event``: its ``wire()`` form), the conversation's messages
(assistant and user), the raw stream events of a reply, and a rate-limit wait."""

from __future__ import annotations

import uuid as _uuid
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from covey.common.versions import CLAUDE_CODE_VERSION as CLAUDE_CODE_VERSION  # re-exported: covey.events names it


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
        """The JSON object printed for it; a system message or a result says when it was written
        (``written_at``), as Claude Code's do."""
        data = self.model_dump(by_alias=True, exclude={"agent_id"})
        wired = {key: value for key, value in data.items() if value is not None or key in self.nullable}
        if self.type in ("system", "result"):
            wired["written_at"] = now_iso()
        return wired


class TranscriptMirror(Event):
    """Records just written to a session file, for the program's session store
    (``--session-mirror``: claude-agent-sdk's ``session_store``; the SDK reads ``filePath`` and
    ``entries`` and keeps the line from its messages)."""

    type: Literal["transcript_mirror"] = "transcript_mirror"
    filePath: str
    entries: list[dict[str, Any]]


class ToolProgress(Event):
    """``tool_progress``: a long tool call still running. Claude Code sends one every 30 s of an
    Agent call (``heartbeat``), with the call's ``description`` and the child's type."""

    type: Literal["tool_progress"] = "tool_progress"
    tool_use_id: str
    tool_name: str
    parent_tool_use_id: str | None = None
    elapsed_time_seconds: float
    heartbeat: bool | None = None
    subagent_type: str | None = None
    description: str | None = None

    nullable: ClassVar[frozenset[str]] = frozenset({"parent_tool_use_id"})


class StreamEvent(Event):
    """One raw Messages API stream event of the main agent's reply (``--include-partial-messages``)."""

    type: Literal["stream_event"] = "stream_event"
    event: dict[str, Any]
    parent_tool_use_id: str | None = None

    nullable: ClassVar[frozenset[str]] = frozenset({"parent_tool_use_id"})


class ConversationReset(Event):
    """The conversation started over (``/clear``): ``session_id`` is the session that ended; the
    messages after this one carry the new session's id (Claude Code's ``conversation_reset``)."""

    type: Literal["conversation_reset"] = "conversation_reset"
    new_conversation_id: str


class RateLimitEvent(Event):
    """A model request waits for the API's rate limit, or gave up waiting: Claude Code's
    ``rate_limit_event`` line (``covey.ratelimit.ports.rate_limit_event`` builds its info)."""

    type: Literal["rate_limit_event"] = "rate_limit_event"
    rate_limit_info: dict[str, Any]


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
    """One content block of a reply, as Claude Code streams and records a reply: a message per
    block, each with the reply's ``id``, ``model`` and ``usage``; the last block's carries the
    reply's ``stop_reason`` (``null`` on the others)."""

    type: Literal["assistant"] = "assistant"
    request_id: str | None = None
    """The API response's request id (Claude Code's ``request_id``), when the model gave one."""
    ends_reply: bool = Field(default=True, exclude=True)
    """The reply's last block: its usage is counted here, once (not on the wire)."""


class UserEvent(_Message):
    type: Literal["user"] = "user"
    tool_use_result: Any = None
    """The structured result of the call answered here (Claude Code's ``toolUseResult``): the
    Agent tool's output, ``"Error: ..."`` for a failed call; absent where covey has none."""
    taken_mail: bool = Field(default=False, exclude=True)
    """Mail the loop took (a notice, a message sent while the agent ran), not an answer to its
    calls: with no turn running it starts the next (not on the wire)."""
