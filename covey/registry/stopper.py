"""Stopping agents: one on request, every one at the run's end, and the stalled ones
(the watchdog). A stopped agent's cleanup runs and its owner is notified once."""

from __future__ import annotations

import asyncio
import logging
from typing import Generic

from covey.errors import AgentUnavailable
from covey.ids import known_agent_id
from covey.registry.books import Books
from covey.registry.events import Ended
from covey.registry.launcher import Launcher
from covey.registry.watcher import Watcher
from covey.runtime.payloads import KeptWorktree
from covey.runtime.ports import H
from covey.runtime.records import FinalReport, RunRecord, Status

log = logging.getLogger(__name__)

CANCEL_GRACE_S = 5.0


class Stopper(Generic[H]):
    """Stops agents (one, every one, the stalled ones) and runs the stall watchdog."""

    def __init__(self, books: Books[H], watcher: Watcher[H], launcher: Launcher[H]) -> None:
        self.books, self.watcher, self.launcher = books, watcher, launcher
        self._watchdog: asyncio.Task[None] | None = None

    async def kill_agent(self, agent_id: str, status: Status = "killed", reason: str = "killed on request") -> bool:
        """End a running agent: its cleanup runs, its owner is notified once. A queued one
        leaves the queue, never started, and its owner is notified once too. ``agent_id``: whole
        or as shown (without ``agent-``)."""
        agent_id = known_agent_id(agent_id, self.books.core.records)
        record = self.books.core.records.get(agent_id)
        if record is not None and record.queued:
            await self._end_dropped(self._drop_queued(agent_id, status, reason))
            return True
        if record is not None and record.live and self._give_up(agent_id, status, reason):
            return True
        actor = self.books.actors.get(agent_id)
        if record is None or not record.live or actor is None:
            return False
        await self._stop(agent_id, actor, status, reason)
        return True

    async def stop_all(self, reason: str, grace_s: float = CANCEL_GRACE_S) -> list[KeptWorktree]:
        """Stop every running agent the registry launched (the run is over: interrupted, or
        a session actor died): their cleanup runs and their owners are notified. Returns
        the worktrees that were kept, as their reports name them. The queued ones are
        dropped first: a stopped agent's slot must not start them."""
        dropped = [self._drop_queued(agent_id, "killed", reason) for agent_id in self.books.core.queue.ids()]
        await asyncio.gather(*(self._end_dropped(record) for record in dropped))
        for agent_id in list(self.launcher.placing):  # Ray holds them: they never start
            self._give_up(agent_id, "killed", reason)
        live = [(agent_id, actor) for agent_id, actor in list(self.books.actors.items())
                if (record := self.books.core.records.get(agent_id)) is not None and record.live]
        await asyncio.gather(*(self._stop(agent_id, actor, "killed", reason) for agent_id, actor in live))
        await self.books.wait_idle(grace_s)
        return [_kept(r.worktree) for r in self.books.core.records.values() if r.worktree and r.worktree.get("kept")]

    def _give_up(self, agent_id: str, status: Status, reason: str) -> bool:
        """End an agent whose actor Ray has not placed yet; False if it is not waiting for one.
        Its launch then fails (a sync one) or delivers this end's notice (a background one)."""
        if not self.launcher.give_up_placing(agent_id):
            return False
        self.books.core.finish(agent_id, FinalReport(status=status, text=f"{reason} (while Ray held it: it never started)"))
        return True

    async def _stop(self, agent_id: str, actor: H, status: Status, reason: str) -> None:
        # Record the cause first, so the watch's report cannot overwrite it.
        self.books.core.finish(agent_id, FinalReport(status=status, text=reason))
        try:
            await asyncio.wait_for(actor.cancel(status, reason, agent_id), CANCEL_GRACE_S)
        except (asyncio.TimeoutError, AgentUnavailable):
            actor.kill()

    def _drop_queued(self, agent_id: str, status: Status, reason: str) -> RunRecord | None:
        """Take a queued agent out of the queue, ended (synchronously: no slot it frees can start it)."""
        self.launcher.forget(agent_id)
        core = self.books.core
        record = core.queue.drop(core, agent_id, status, f"{reason} (while queued: it never started)")
        if record is not None and record.report is not None:
            # Now, not after its worktree is seen to: a restart meanwhile must not start it.
            self.books.journal.record(Ended(agent_id, record.report))
        return record

    async def _end_dropped(self, record: RunRecord | None) -> None:
        """A dropped queued agent's end: its worktree (made at launch) cleaned or kept, its one notice."""
        if record is None or record.report is None:
            return
        if (worktree := await self.watcher.dead_agents_worktree(record.agent_id)) is not None:
            record.worktree = worktree
            record.report = record.report.model_copy(update={"worktree": worktree})
        await self.watcher.end_queued(record.agent_id, record.report)

    # -- the stall watchdog ---------------------------------------------------------

    def start_watchdog(self) -> None:
        if self._watchdog is None:
            self._watchdog = asyncio.create_task(self._watch_stalls())

    def close(self) -> None:
        """Stop the watchdog."""
        if self._watchdog is not None:
            self._watchdog.cancel()
        self._watchdog = None

    async def _watch_stalls(self) -> None:
        tick_s = min(1.0, self.books.core.limits.stall_ms / 4000)
        while True:
            await asyncio.sleep(tick_s)
            try:
                self.stop_stalled()
            except Exception:  # one bad tick must not end the watchdog
                log.exception("stall watchdog tick failed")

    def stop_stalled(self) -> list[str]:
        """One watchdog tick: start stopping every stalled agent; their ids."""
        stopping = []
        for agent_id in self.books.core.stalled():
            # A reserved agent whose actor is still starting is not stalled.
            if (actor := self.books.actors.get(agent_id)) is not None:
                reason = f"stalled: no message or tool progress for {self.books.core.limits.stall_ms} ms"
                self.books.spawn(self._stop(agent_id, actor, "failed", reason))
                stopping.append(agent_id)
        return stopping


def _kept(worktree: dict[str, object]) -> KeptWorktree:
    """A record's kept worktree as ``stop_all`` names it (where it is, on which branch, why)."""
    kept: KeptWorktree = {"kept": True, "path": str(worktree.get("path", "")), "branch": str(worktree.get("branch", ""))}
    if worktree.get("reason"):
        kept["reason"] = str(worktree["reason"])
    return kept
