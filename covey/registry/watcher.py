"""Watching a started agent to its end, and what follows the end: the record, orphaned
children's notices, a teammate's tasks, the notification, and a resume when mail waits.

Every running agent's actor is watched: a dead actor becomes a ``failed`` record and
one notification, and a finished actor goes back to the pool. A completed agent that
was sent a message is resumed from its transcript (docs/subagents.md#transcripts).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Generic, Protocol

from covey.errors import AgentUnavailable, first_line
from covey.registry.books import Books
from covey.registry.events import Ended, Notified
from covey.registry.notify import Notices, notify
from covey.runtime.answers import Finished
from covey.runtime.ports import H
from covey.runtime.records import FinalReport, RunRecord
from covey.runtime.worktree import Worktree
from covey.teams.delivery import EndedRun, mail_may_resume
from covey.teams.messages import Mail
from covey.teams.tasks import Task

if TYPE_CHECKING:
    from covey.runtime.spec import AgentSpec

log = logging.getLogger(__name__)

REVIVALS = 2
"""How many times an agent lost with its node is started again from its transcript."""
NODE_DEATH_WAIT_S = 60.0
"""How long a lost actor's cause is waited for (Ray's health checks take ~15 s to count a node dead)."""


History = list[dict[str, Any]]
"""A transcript rebuilt as model messages (``rebuild_history``)."""


class Watcher(Generic[H]):
    """Each started agent watched to its end; the end's consequences; a finished agent resumed."""

    def __init__(
        self, books: Books[H], mailbox: Notices, *, load_history: Callable[[str], History],
        finish_worktree: Callable[[Worktree], Awaitable[dict[str, Any] | None]],
        place_problem: Callable[[AgentSpec], str | None], node_alive: Callable[[str | None], bool],
    ) -> None:
        self.books, self.mailbox = books, mailbox
        self.load_history, self.finish_worktree = load_history, finish_worktree
        self.place_problem = place_problem
        """Why a finished agent's directory or worktree can no longer be trusted (a resume is refused)."""
        self.node_alive = node_alive
        """Whether a Ray node still lives (a lost agent whose node is gone is revived: ``_revived``)."""
        self._revivals: dict[str, int] = {}
        self._resuming: set[str] = set()
        self._forwarded: set[str] = set()
        """Agents whose children's notices the mailbox forwards to the main agent."""

    async def track(self, agent_id: str, actor: H, output_file: str | None = None, node_id: str | None = None,
                    run: Awaitable[Finished] | None = None) -> None:
        """Watch a started agent's actor until its run ends or the actor dies; ``run``: the
        call that starts it and answers at its end (default: ``finish`` on a started run)."""
        record = self.books.core.records.get(agent_id)
        if record is not None:
            record.output_file, record.node_id = output_file, node_id
            record.last_activity = self.books.core.clock()  # the stall clock starts when the agent does
            record.started_at = time.time()
        self.books.actors[agent_id] = actor
        self.books.watches[agent_id] = asyncio.create_task(self._watch(agent_id, actor, run))

    async def _watch(self, agent_id: str, actor: H, run: Awaitable[Finished] | None) -> None:
        report, clean, reusable = await self._outcome(agent_id, actor, run)
        if not reusable and await self._revived(agent_id, actor, report.text):
            actor.kill()
            return
        try:
            await self._complete(agent_id, report)
        except Exception:
            log.exception("completing %s failed", agent_id)
        finally:
            self.books.actors.pop(agent_id, None)
            self.books.watches.pop(agent_id, None)
            if reusable:
                self.books.spawn(self.books.pool.give_back(actor, clean))
            else:
                actor.kill()

    async def _outcome(self, agent_id: str, actor: H, run: Awaitable[Finished] | None,
                       ) -> tuple[FinalReport, bool | None, bool]:
        """How the watched run ended: its report, how its actor reset, whether the actor may serve again."""
        try:
            finished = await (run if run is not None else actor.finish())
            return finished.report, finished.clean, True
        except AgentUnavailable as exc:
            report = FinalReport(status="failed", text=f"The agent's actor died: {first_line(exc)}",
                                 worktree=await self.dead_agents_worktree(agent_id))
        except Exception as exc:  # a watch never takes the registry down with it
            doing = "started" if run is not None else "watched"
            report = FinalReport(status="failed", text=f"The agent could not be {doing}: {first_line(exc)}")
        return report, None, False

    async def _revived(self, agent_id: str, actor: H, why: str) -> bool:
        """A background agent whose actor was lost with its node goes on from its transcript on
        another actor, up to ``REVIVALS`` times; an actor that died on a live node (a
        crash, a kill) is not revived: its record fails, as before."""
        record, spec = self.books.core.records.get(agent_id), self.books.specs.get(agent_id)
        if record is None or spec is None or not record.live or not record.background or not record.output_file \
                or self._revivals.get(agent_id, 0) >= REVIVALS or not await self._node_lost(actor, why):
            return False
        history = await asyncio.to_thread(self.load_history, record.output_file)
        if not history:
            return False
        self._revivals[agent_id] = self._revivals.get(agent_id, 0) + 1
        record.lost_on.append(actor.node or "unknown")
        runtime = self.books.runtimes.newest
        try:
            revived = await self.books.pool.take(_lane(spec))
            run = revived.run_detached(spec.model_copy(update={"history": history, "background": True}),
                                       runtime=runtime, runtime_ref=self.books.runtimes.ref(runtime))
        except Exception:
            log.exception("reviving %s failed", agent_id)
            return False
        log.warning("%s was lost with its node; it goes on from its transcript on another actor", agent_id)
        await self.track(agent_id, revived, record.output_file, revived.node, run=run)
        return True

    async def _node_lost(self, actor: H, why: str) -> bool:
        """Whether the actor died with its node. A call in flight fails at once, but Ray names the
        cause only once its health checks have counted the node dead: ask the actor (a worker that
        crashed on a live node is known dead at once) or the node, for up to ``NODE_DEATH_WAIT_S``."""
        deadline = time.monotonic() + NODE_DEATH_WAIT_S
        while time.monotonic() < deadline:
            if "node" in why.lower() and "died" in why.lower():
                return True
            if not await asyncio.to_thread(self.node_alive, actor.node):
                return True
            try:
                await asyncio.wait_for(actor.ping(), 2.0)
                return False  # it answers: not lost
            except AgentUnavailable as exc:
                if not exc.restarting:  # dead for good: its node, if Ray says so or counts the node dead
                    return "node" in str(exc).lower() or not await asyncio.to_thread(self.node_alive, actor.node)
                why = str(exc)
            except asyncio.TimeoutError:
                pass
            await asyncio.sleep(1.0)
        return False

    async def dead_agents_worktree(self, agent_id: str) -> dict[str, Any] | None:
        """An agent whose actor died ran no cleanup: its worktree is removed here if
        unchanged, else kept and reported (the registry runs where the files are)."""
        spec = self.books.specs.get(agent_id)
        if spec is None or not spec.worktree:
            return None
        try:
            return await self.finish_worktree(spec.worktree)
        except Exception:  # a worktree that cannot be looked at is left, as a kept one
            log.exception("cleaning the worktree of %s failed", agent_id)
            return {**spec.worktree.model_dump(), "kept": True}

    # -- the end of a run ---------------------------------------------------------

    async def _complete(self, agent_id: str, report: FinalReport) -> None:
        self.books.journal.record(Ended(agent_id, report))
        self.books.core.finish(agent_id, report)
        await self.ended(agent_id, report)
        self.books.journal.record(Notified(agent_id))

    async def end_queued(self, agent_id: str, report: FinalReport) -> None:
        """``ended`` for the end of a queued launch that never ran (the books have it already),
        journaled as ``_complete`` journals a run's end."""
        self.books.journal.record(Ended(agent_id, report))
        await self.ended(agent_id, report)
        self.books.journal.record(Notified(agent_id))

    async def ended(self, agent_id: str, report: FinalReport) -> None:
        """The consequences of an end already in the books (a run's, or a queued launch's that never ran)."""
        await self._forward_orphans(agent_id)
        released = await self._release_team_tasks(agent_id)
        await notify(self.books.core, self.mailbox, agent_id, released, report)
        await self._resume_if_mail_waits(agent_id)
        record = self.books.core.records.get(agent_id)
        if not self.books.runtimes.messaging and (record is None or not record.live):
            # Nothing can resume it: only SendMessage does (teams, coordinator mode).
            self.books.specs.pop(agent_id, None)

    async def _forward_orphans(self, agent_id: str) -> None:
        """An agent ended while background children it owns still run, or was killed with
        their notices unread: the mailbox sends those, queued and to come, on to the main
        agent (docs/subagents.md#what-the-parent-gets-back)."""
        if self.books.core.notices_go_to_main(agent_id) and self.books.core.main_agent_id is not None:
            self._forwarded.add(agent_id)
            await self.mailbox.close(agent_id, self.books.core.main_agent_id)

    async def _resume_if_mail_waits(self, agent_id: str) -> None:
        """A leaf agent ends without a last look at its mailbox (that would cost every
        child a round trip): mail that came during its last turn resumes it, as mail to a
        finished agent does (docs/teams.md). Teammates drain before they end; killed or failed
        agents stay ended."""
        record, spec = self.books.core.records.get(agent_id), self.books.specs.get(agent_id)
        if record is None or spec is None:
            return
        core = self.books.core
        ending = EndedRun(status=record.status, background=record.background, has_owner=record.parent_agent_id is not None,
                        teammate=bool(spec.team), messaging=self.books.runtimes.messaging,
                        launched_background=any(child.background for child in core.children(agent_id)))
        if mail_may_resume(ending) and await self.mailbox.pending(agent_id) > 0:
            await self.resume(agent_id)

    async def _release_team_tasks(self, agent_id: str) -> list[Task]:
        """A teammate that ended gives back its unfinished tasks (docs/teams.md) and leaves the roster."""
        record, spec = self.books.core.records.get(agent_id), self.books.specs.get(agent_id)
        team = spec.team if spec is not None else None
        if record is None or not team:
            return []
        try:
            released: list[Task] = await team.board.release_owner(team.member)
            await team.roster.remove(agent_id)
            return released
        except Exception:  # a gone team has nothing to release; the notice still goes out
            log.exception("releasing the tasks of %s failed", agent_id)
            return []

    # -- resuming a finished agent ------------------------------------------------

    async def resume(self, agent_id: str) -> str | None:
        """Wake a completed agent that was sent a message: rebuilt from its transcript (docs/subagents.md#transcripts).

        Returns a note for the sender, or None when the agent is running or queued (it reads
        the message between turns) or cannot be resumed.
        """
        record, spec = self.books.core.records.get(agent_id), self.books.specs.get(agent_id)
        if record is None or record.live or record.queued or spec is None or not record.output_file \
                or agent_id in self._resuming:
            return None
        self._resuming.add(agent_id)  # a sender and the end-of-run check may both ask at once
        try:
            history = await asyncio.to_thread(self.load_history, record.output_file)
            if not history:
                return None
            if problem := await asyncio.to_thread(self.place_problem, spec):
                return f"{agent_id} had finished and was not resumed: {problem}"
            return await self._rerun(agent_id, record, history)
        finally:
            self._resuming.discard(agent_id)

    async def _rerun(self, agent_id: str, record: RunRecord, history: History) -> str:
        spec = self.books.specs[agent_id]
        self.books.core.reopen(agent_id)
        if agent_id in self._forwarded:
            self._forwarded.discard(agent_id)
            await self.mailbox.reopen(agent_id)
        runtime = self.books.runtimes.newest
        try:
            actor = await self.books.pool.take(_lane(spec))
            run = actor.run_detached(spec.model_copy(update={"history": history, "background": True}),
                                     runtime=runtime, runtime_ref=self.books.runtimes.ref(runtime))
        except Exception as exc:
            self.books.core.finish(agent_id, FinalReport(status="failed", text=f"could not be resumed: {exc}"))
            return f"{agent_id} could not be resumed: {exc}"
        await self.track(agent_id, actor, record.output_file, actor.node, run=run)
        return f"{agent_id} had finished; it was resumed from its transcript to read the message."


def _lane(spec: AgentSpec) -> str:
    """Where a revived or resumed agent's new actor comes from: the home lane, or the lane of the
    resources its definition asks for (they are what it needs, wherever it ran first)."""
    return spec.definition.resources.lane() if spec.definition.resources is not None else "home"
