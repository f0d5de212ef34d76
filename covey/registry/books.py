"""The supervisor's one shared state: the plain ``Registry`` core, the agents' actors,
specs and watches, the session runtimes, the pool, the tasks it started, and the journal.
Its questions and small updates are asked across the actor boundary (each is one
synchronous step of the core). Each job (``Launcher``, ``Watcher``, ``Stopper``) holds it."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Generic, Unpack

from covey.ids import known_agent_id
from covey.registry.checks import budget_spent
from covey.registry.core import Registry
from covey.registry.events import SPEND, EventSink, NoJournal, Spent
from covey.registry.runtimes import Runtimes
from covey.registry.tree import UsageTree
from covey.runtime.limits import Limits
from covey.runtime.payloads import PoolStats
from covey.runtime.payloads import Held, ProgressFields, SessionUsage
from covey.runtime.ports import H, Pool
from covey.runtime.records import FinalReport, RunRecord

if TYPE_CHECKING:
    from covey.registry.runtimes import Put
    from covey.runtime.spec import AgentSpec

REPORT_WAIT_S = 30.0


class Books(Generic[H]):
    """What the supervisor's jobs share: one of each, held here and nowhere else."""

    def __init__(self, limits: Limits, *, pool: Pool[H], clock: Callable[[], float] = time.monotonic,
                 put: Put | None = None, journal: EventSink | None = None) -> None:
        self.core = Registry(limits, clock)
        self.pool = pool
        self.runtimes = Runtimes(put)
        self.actors: dict[str, H] = {}
        self.specs: dict[str, AgentSpec] = {}
        """Launched agents' specs without their runtime, kept while the agent may be resumed
        (to the end of the session with teams or in coordinator mode, where SendMessage reaches finished agents)."""
        self.watches: dict[str, asyncio.Task[None]] = {}
        self.journal: EventSink = journal or NoJournal()
        """Where launches, ends and notices are written before they take effect (a kit's registry,
        which Ray restarts: ``covey.registry.journal``); ``NoJournal``: nothing outlives this actor."""
        # asyncio keeps only weak references to tasks: hold ours until they finish.
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def close(self) -> None:
        """Cancel the tasks in flight (the give-backs, the stops, the queued starts)."""
        for task in list(self._tasks):
            task.cancel()

    async def take(self, lane: str = "home") -> H:
        """A warm agent actor for an agent the registry does not launch (the main agent)."""
        return await self.pool.take(lane)

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self.pool.warm(n, lane)

    async def pool_stats(self) -> PoolStats:
        return self.pool.stats()

    async def held(self) -> Held:
        """What the registry holds per agent: records (the session's history) and the specs kept for resuming."""
        return {"records": len(self.core.records), "specs": len(self.specs), "watches": len(self.watches)}

    async def find(self, name_or_id: str) -> RunRecord | None:
        return self.core.find(known_agent_id(name_or_id, self.core.records))

    async def abandon(self, agent_id: str) -> None:
        self.core.abandon(agent_id)

    async def finish_main(self, agent_id: str, report: FinalReport) -> None:
        self.core.finish(agent_id, report)

    async def progress(self, agent_id: str, **fields: Unpack[ProgressFields]) -> str | None:
        """The agent's figures, recorded; why the session's budget is spent, if it is."""
        self.core.progress(agent_id, **fields)
        given: dict[str, object] = dict(fields)
        if spent := {name: given[name] for name in SPEND if name in given}:
            self.journal.record(Spent(agent_id, spent))  # a restarted registry counts it
        return budget_spent(self.core)

    async def set_parked(self, agent_id: str, parked: bool, seq: int | None = None) -> None:
        self.core.set_parked(agent_id, parked, seq)

    async def to_background(self, agent_id: str) -> bool:
        return self.core.to_background(agent_id)

    async def outstanding(self, owner_agent_id: str) -> list[str]:
        return self.core.outstanding(owner_agent_id)

    async def record(self, agent_id: str) -> RunRecord | None:
        """The agent's record, by its id whole or as shown (without ``agent-``)."""
        return self.core.records.get(known_agent_id(agent_id, self.core.records))

    async def records(self) -> list[RunRecord]:
        return list(self.core.records.values())

    async def tree(self, agent_id: str | None = None) -> UsageTree | None:
        return self.core.tree(agent_id)

    async def session_usage(self) -> SessionUsage:
        return self.core.session_usage()

    async def actor_of(self, agent_id: str) -> H | None:
        """The handle of a running agent's actor (``covey kill``, tests), or None."""
        return self.actors.get(agent_id)

    async def report_of(self, agent_id: str, timeout_s: float = REPORT_WAIT_S) -> FinalReport | None:
        """The report of ``agent_id``'s ended run, once its watch has recorded it (a sync
        parent whose event stream broke asks this); None if it has not ended in time."""
        if (watch := self.watches.get(agent_id)) is not None:
            await asyncio.wait({watch}, timeout=timeout_s)  # waits without cancelling the watch
        record = self.core.records.get(agent_id)
        return record.report if record is not None and not record.live else None

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        """Wait until no watch is running (every agent ended and was reported)."""
        pending = [t for t in list(self.watches.values()) if not t.done()]
        if not pending:
            return True
        _, still = await asyncio.wait(pending, timeout=timeout_s)
        return not still
