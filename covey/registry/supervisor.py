"""The registry's supervision rules as plain Python: launch, watch, complete, notify, stop.

``Supervisor`` is given every collaborator that touches the outside: the warm pool, the
mailbox, a monotonic clock, the transcript loader, the worktree finisher, a way to put the
session runtime in the object store, and the journal. The Ray actor
(``covey.registry.actor``) is this class with the real ones; the tests build one with fakes.

It composes three jobs around one ``Books`` (the shared state: ``covey.registry.books``):
``Launcher`` (launches, queued ones), ``Watcher`` (a run watched to its end, the end's
consequences, a resume) and ``Stopper`` (kill, stop all, the stall watchdog); ``notify``
delivers the notification. Each registry call is one method here, passed to its owner.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Generic, Unpack

from covey.registry.books import REPORT_WAIT_S, Books
from covey.registry.events import EventSink
from covey.registry.launcher import Launcher
from covey.registry.notify import Notices
from covey.registry.stopper import CANCEL_GRACE_S, Stopper
from covey.registry.tree import UsageTree
from covey.registry.watcher import History, Watcher
from covey.runtime.answers import LaunchAnswer, Refused, not_started
from covey.runtime.limits import Limits
from covey.runtime.payloads import Held, KeptWorktree, LaunchCall, PoolStats, ProgressFields, SessionUsage
from covey.runtime.ports import H, Pool
from covey.runtime.records import FinalReport, LaunchRequest, RunRecord, Status
from covey.runtime.worktree import Worktree, finish_worktree_record, resume_place_problem
from covey.transcripts.transcript import rebuild_history

if TYPE_CHECKING:
    from covey.registry.runtimes import Put
    from covey.runtime.spec import AgentSpec

__all__ = ["CANCEL_GRACE_S", "REPORT_WAIT_S", "Supervisor"]


class Supervisor(Generic[H]):
    """The registry's rules over agents of type ``H`` (``AgentHandle`` in the Ray actor)."""

    def __init__(
        self, limits: Limits, *, pool: Pool[H], mailbox: Notices, clock: Callable[[], float] = time.monotonic,
        load_history: Callable[[str], History] = rebuild_history,
        finish_worktree: Callable[[Worktree], Awaitable[dict[str, Any] | None]] = finish_worktree_record,
        put: Put | None = None, place_problem: Callable[[AgentSpec], str | None] = resume_place_problem,
        node_alive: Callable[[str | None], bool] = lambda node: True, journal: EventSink | None = None,
    ) -> None:
        self.books = Books(limits, pool=pool, clock=clock, put=put, journal=journal)
        self.watcher = Watcher(self.books, mailbox, load_history=load_history, finish_worktree=finish_worktree,
                               place_problem=place_problem, node_alive=node_alive)
        self.launcher = Launcher(self.books, self.watcher)
        self.stopper = Stopper(self.books, self.watcher, self.launcher)

    async def close(self) -> None:
        """Stop the watchdog and the tasks in flight (an in-memory supervisor's end; a Ray
        actor's end stops them with its process)."""
        self.stopper.close()
        self.books.close()

    # -- launching (the first one starts the stall watchdog) ----------------------------

    async def register_main(self, agent_id: str, model: str, cwd: str, prompt: str = "",
                            output_file: str | None = None, node_id: str | None = None) -> RunRecord:
        self.stopper.start_watchdog()
        return await self.launcher.register_main(agent_id, model, cwd, prompt, output_file, node_id)

    async def reserve(self, request: LaunchRequest) -> RunRecord | Refused:
        self.stopper.start_watchdog()
        return await self.launcher.reserve(request)

    async def launch(self, request: LaunchRequest, spec: AgentSpec | None, follow: bool = False, lane: str = "home",
                     output_file: str | None = None, runtime_key: str | None = None) -> LaunchAnswer:
        self.stopper.start_watchdog()
        return await self.launcher.launch(request, spec, follow, lane, output_file, runtime_key)

    async def launch_many(self, launches: list[LaunchCall]) -> AsyncIterator[tuple[int, LaunchAnswer]]:
        """Several launches in one call (the Agent calls of one assistant message), each
        answered as ``launch`` answers it, as ``(index, answer)`` the moment it is ready: a
        launch that gets a warm actor does not wait for one whose actor is still being
        created (its sync parent could not follow it, nor the actor be recycled). Their
        checks run in the order given: each reserves before the next one is checked (a
        task runs up to its first wait when it starts, and they start in order)."""
        async def one(index: int, launch: LaunchCall) -> tuple[int, LaunchAnswer]:
            try:
                return index, await self.launch(launch.request, launch.spec, launch.follow, launch.lane,
                                                launch.output_file, launch.runtime_key)
            except Exception as exc:
                return index, not_started(exc)

        for answered in asyncio.as_completed([asyncio.ensure_future(one(i, a)) for i, a in enumerate(launches)]):
            yield await answered

    async def resume(self, agent_id: str) -> str | None:
        return await self.watcher.resume(agent_id)

    # -- stopping --------------------------------------------------------------------

    async def kill_agent(self, agent_id: str, status: Status = "killed", reason: str = "killed on request") -> bool:
        return await self.stopper.kill_agent(agent_id, status, reason)

    async def stop_all(self, reason: str, grace_s: float = CANCEL_GRACE_S) -> list[KeptWorktree]:
        return await self.stopper.stop_all(reason, grace_s)

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        return await self.books.wait_idle(timeout_s)

    # -- the books: questions and small updates --------------------------------------

    async def take(self, lane: str = "home") -> H:
        return await self.books.take(lane)

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self.books.warm(n, lane)

    async def pool_stats(self) -> PoolStats:
        return await self.books.pool_stats()

    async def held(self) -> Held:
        return await self.books.held()

    async def find(self, name_or_id: str) -> RunRecord | None:
        return await self.books.find(name_or_id)

    async def abandon(self, agent_id: str) -> None:
        await self.books.abandon(agent_id)

    async def finish_main(self, agent_id: str, report: FinalReport) -> None:
        await self.books.finish_main(agent_id, report)

    async def progress(self, agent_id: str, **fields: Unpack[ProgressFields]) -> str | None:
        return await self.books.progress(agent_id, **fields)

    async def set_parked(self, agent_id: str, parked: bool, seq: int | None = None) -> None:
        await self.books.set_parked(agent_id, parked, seq)

    async def to_background(self, agent_id: str) -> bool:
        return await self.books.to_background(agent_id)

    async def outstanding(self, owner_agent_id: str) -> list[str]:
        return await self.books.outstanding(owner_agent_id)

    async def record(self, agent_id: str) -> RunRecord | None:
        return await self.books.record(agent_id)

    async def records(self) -> list[RunRecord]:
        return await self.books.records()

    async def tree(self, agent_id: str | None = None) -> UsageTree | None:
        return await self.books.tree(agent_id)

    async def session_usage(self) -> SessionUsage:
        return await self.books.session_usage()

    async def actor_of(self, agent_id: str) -> H | None:
        return await self.books.actor_of(agent_id)

    async def report_of(self, agent_id: str, timeout_s: float = REPORT_WAIT_S) -> FinalReport | None:
        return await self.books.report_of(agent_id, timeout_s)
