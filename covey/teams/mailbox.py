"""Per-recipient message queues (docs/teams.md), as plain Python.

A receiver drains between turns: shutdown requests first, then every unread
message together, each marked read. Sending means "queued", nothing more.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict, deque
from typing import Protocol

from covey.teams.messages import Mail, ShutdownRequest, TaskNotice

READ_LOG = 1000


class MailboxProtocol(Protocol):
    async def put(self, recipient: str, mail: Mail) -> str: ...
    async def drain(self, recipient: str) -> list[Mail]: ...
    async def wait(self, recipient: str, timeout_s: float | None = None) -> list[Mail]: ...
    async def pending(self, recipient: str) -> int: ...
    async def history(self, recipient: str) -> list[Mail]: ...


class Mailbox:
    """In-memory mailbox; the Ray actor wraps one of these."""

    def __init__(self) -> None:
        self._empty()

    async def reset(self) -> None:
        """Empty, for another session (a covey service reuses a finished session's mailbox)."""
        self._empty()

    def _empty(self) -> None:
        self.unread: dict[str, list[Mail]] = defaultdict(list)
        self.read: dict[str, deque[Mail]] = defaultdict(lambda: deque(maxlen=READ_LOG))
        self._arrived: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self.notice_keys: set[str] = set()
        """Keys of the task notices queued so far: one notice per key (claim-once, docs/subagents.md#what-the-parent-gets-back)."""
        self.forward: dict[str, str] = {}
        """Agents that ended while background children still ran: their notices go on to the main agent."""

    async def put(self, recipient: str, mail: Mail) -> str:
        """Queue ``mail``; "" if it is a task notice whose key was queued already.

        A background agent puts its own notice, and the registry puts one when the
        agent's actor died or the agent was stopped; the first to arrive is the one.
        """
        if isinstance(mail, TaskNotice) and mail.key:
            if mail.key in self.notice_keys:
                return ""
            self.notice_keys.add(mail.key)
            recipient = self.forward.get(recipient, recipient)
        self._queue(recipient, mail)
        return mail.message_id

    async def close(self, recipient: str, forward_to: str) -> None:
        """``recipient`` ended before its background children: their notices, queued or
        still to come, go to ``forward_to`` (the main agent, as the registry's own are)."""
        if recipient == forward_to:
            return
        self.forward[recipient] = forward_to
        unread = self.unread.get(recipient, [])
        notices = [mail for mail in unread if isinstance(mail, TaskNotice)]
        if notices:
            self.unread[recipient] = [mail for mail in unread if not isinstance(mail, TaskNotice)]
            for notice in notices:
                self._queue(forward_to, notice)

    async def reopen(self, recipient: str) -> None:
        """``recipient`` runs again (resumed): its notices come to it again."""
        self.forward.pop(recipient, None)

    def _queue(self, recipient: str, mail: Mail) -> None:
        mail.arrived_at = time.time()
        self.unread[recipient].append(mail)
        self._arrived[recipient].set()

    async def drain(self, recipient: str) -> list[Mail]:
        """Every unread message, shutdown requests first; all marked read."""
        mail = self.unread.pop(recipient, [])
        self._arrived[recipient].clear()
        mail.sort(key=lambda m: not isinstance(m, ShutdownRequest))  # stable: order kept within each group
        self.read[recipient].extend(mail)
        return mail

    async def wait(self, recipient: str, timeout_s: float | None = None) -> list[Mail]:
        """Drain as soon as something arrives; [] if ``timeout_s`` passes first."""
        if not self.unread.get(recipient):
            try:
                await asyncio.wait_for(self._arrived[recipient].wait(), timeout_s)
            except asyncio.TimeoutError:
                return []
        return await self.drain(recipient)

    async def pending(self, recipient: str) -> int:
        return len(self.unread.get(recipient, ()))

    async def history(self, recipient: str) -> list[Mail]:
        """What the recipient has read (the last ``READ_LOG``), then what is still unread."""
        return [*self.read.get(recipient, ()), *self.unread.get(recipient, ())]

    async def forget(self, recipient: str) -> None:
        """Drop a finished agent's queues (after its last drain)."""
        self.unread.pop(recipient, None)
        self.read.pop(recipient, None)
        self._arrived.pop(recipient, None)
