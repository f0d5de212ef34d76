"""Queued spawns (docs/subagents.md#queued-spawns): with ``Limits.queue_spawns`` on, a
background launch past the concurrency limit is recorded ``queued`` instead of refused,
and starts when a slot frees, in launch order. A background launch also waits here while as
many sub-agents are at work as the machine runs well (``Limits.max_active``), with or without
``queue_spawns``.

Plain, like the rest of the core's books: every step is synchronous, so a freed slot
passes to the head of the queue before any other launch is checked (nothing jumps the
queue, and never more than ``max_concurrent`` agents run).
"""

from __future__ import annotations

import time
from typing import Callable, Literal, Mapping, Protocol

from covey.registry.checks import CHECKS, LaunchBooks, budget_spent, check_concurrency, refusal
from covey.runtime.answers import Refused
from covey.runtime.records import FinalReport, LaunchRequest, RunRecord, Status


class QueueBooks(LaunchBooks, Protocol):
    """What the queue reads and settles of the registry's books (``Registry`` passes itself)."""

    @property
    def cpus(self) -> int: ...
    @property
    def open(self) -> Mapping[str, RunRecord]: ...
    @property
    def clock(self) -> Callable[[], float]: ...
    def settle(self, record: RunRecord) -> None: ...

_BUT_CONCURRENCY = tuple(check for check in CHECKS if check is not check_concurrency)


class SpawnQueue:
    """The queued launches of one session, oldest first."""

    def __init__(self) -> None:
        self._waiting: dict[str, RunRecord] = {}
        """By agent id, in launch order (a dict keeps insertion order)."""

    def __len__(self) -> int:
        return len(self._waiting)

    def ids(self) -> list[str]:
        """The queued agents' ids, next to start first."""
        return list(self._waiting)

    def refusal_past_limit(self, core: QueueBooks, request: LaunchRequest, refused: Refused) -> Refused | None:
        """What a launch the checks refused is answered: None if it waits in the queue instead
        (queueing is on, it runs in the background, and the concurrency check is the only one
        that refuses it); else the refusal (a later check's, if one fails too: depth, budget,
        type, place and role still refuse at once, and a sync child, whose parent waits on it)."""
        if refused.kind != "concurrency" or not request.background or not core.limits.queue_spawns:
            return refused
        return refusal(core, request, _BUT_CONCURRENCY)

    def why_waits(self, core: QueueBooks, request: LaunchRequest) -> Refused | Literal["concurrency", "active"] | None:
        """The launch checks' refusal, or why an allowed launch waits in the queue, or None: it starts."""
        if (refused := refusal(core, request)) is not None:
            still = self.refusal_past_limit(core, request, refused)
            return "concurrency" if still is None else still
        return "active" if self.waits_its_turn(core, request) else None

    def waits_its_turn(self, core: QueueBooks, request: LaunchRequest) -> bool:
        """Whether a background launch the checks allow waits in the queue anyway: as many
        sub-agents are at work as the machine runs well (``Limits.max_active``), or launches
        wait already (nothing jumps the queue). A sync child starts at once (its parent waits on
        it), and so does a teammate (it lives as long as its team)."""
        if not request.background or request.spawns_teammate:
            return False
        if self._waiting:
            return True
        limit = core.limits.active_limit(core.cpus)
        return limit is not None and at_work(core) >= limit

    def add(self, record: RunRecord) -> None:
        self._waiting[record.agent_id] = record

    def discard(self, agent_id: str) -> None:
        """Forget a reservation undone (``Registry.abandon``)."""
        self._waiting.pop(agent_id, None)

    def promote(self, core: QueueBooks) -> list[RunRecord]:
        """The queued records whose turn has come, as slots are free, oldest first: each is now
        ``running`` (reserved: the supervisor starts it), or ``failed`` if the session
        budget was spent while it waited (its notice names the budget)."""
        moved = []
        while self._waiting and self._room(core):
            record = self._waiting.pop(next(iter(self._waiting)))
            if (spent := budget_spent(core)) is not None:
                end(record, "failed", f"Not started: when its turn in the queue came, {spent}.")
            else:
                record.status, record.started_at, record.last_activity = "running", time.time(), core.clock()
                record.queued_for = None
            core.settle(record)
            moved.append(record)
        return moved

    @staticmethod
    def _room(core: QueueBooks) -> bool:
        """A slot under the concurrency limit, and room among the agents at work."""
        limit = core.limits.active_limit(core.cpus)
        return core.live_subagents() < core.limits.max_concurrent and (
            limit is None or at_work(core) < limit)

    def drop(self, core: QueueBooks, agent_id: str, status: Status, reason: str) -> RunRecord | None:
        """End a queued record that never started (a kill, the session's end); None if it is not queued."""
        record = self._waiting.pop(agent_id, None)
        if record is None:
            return None
        end(record, status, reason)
        core.settle(record)
        return record


def at_work(core: QueueBooks) -> int:
    """Live sub-agents at work: not parked waiting for their own background children."""
    return sum(1 for r in core.open.values() if r.live and r.role != "main" and not r.parked)


def end(record: RunRecord, status: Status, text: str) -> None:
    """Mark a record that never ran ended: its report says why, it spent nothing."""
    record.status, record.report, record.ended_at = status, FinalReport(status=status, text=text), time.time()
