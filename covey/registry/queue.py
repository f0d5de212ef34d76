"""Queued spawns (docs/subagents.md#queued-spawns): with ``Limits.queue_spawns`` on, a
background launch past the concurrency limit is recorded ``queued`` instead of refused,
and starts when a slot frees, in launch order.

Plain, like the rest of the core's books: every step is synchronous, so a freed slot
passes to the head of the queue before any other launch is checked (nothing jumps the
queue, and never more than ``max_concurrent`` agents run).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from covey.agents.records import FinalReport, LaunchRequest, RunRecord, Status
from covey.registry.answers import Refused
from covey.registry.checks import CHECKS, budget_spent, check_concurrency, refusal

if TYPE_CHECKING:
    from covey.registry.core import Registry

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

    def refusal_past_limit(self, core: Registry, request: LaunchRequest, refused: Refused) -> Refused | None:
        """What a launch the checks refused is answered: None if it waits in the queue instead
        (queueing is on, it runs in the background, and the concurrency check is the only one
        that refuses it); else the refusal (a later check's, if one fails too: depth, budget,
        type, place and role still refuse at once, and a sync child, whose parent waits on it)."""
        if refused.kind != "concurrency" or not request.background or not core.limits.queue_spawns:
            return refused
        return refusal(core, request, _BUT_CONCURRENCY)

    def add(self, record: RunRecord) -> None:
        self._waiting[record.agent_id] = record

    def discard(self, agent_id: str) -> None:
        """Forget a reservation undone (``Registry.abandon``)."""
        self._waiting.pop(agent_id, None)

    def promote(self, core: Registry) -> list[RunRecord]:
        """The queued records whose turn has come, as slots are free, oldest first: each is now
        ``running`` (reserved: the supervisor starts it), or ``failed`` if the session
        budget was spent while it waited (its notice names the budget)."""
        moved = []
        while self._waiting and core.live_subagents() < core.limits.max_concurrent:
            record = self._waiting.pop(next(iter(self._waiting)))
            if (spent := budget_spent(core)) is not None:
                end(record, "failed", f"Not started: when its turn in the queue came, {spent}.")
            else:
                record.status, record.started_at, record.last_activity = "running", time.time(), core.clock()
            core.settle(record)
            moved.append(record)
        return moved

    def drop(self, core: Registry, agent_id: str, status: Status, reason: str) -> RunRecord | None:
        """End a queued record that never started (a kill, the session's end); None if it is not queued."""
        record = self._waiting.pop(agent_id, None)
        if record is None:
            return None
        end(record, status, reason)
        core.settle(record)
        return record


def end(record: RunRecord, status: Status, text: str) -> None:
    """Mark a record that never ran ended: its report says why, it spent nothing."""
    record.status, record.report, record.ended_at = status, FinalReport(status=status, text=text), time.time()
