"""The registry's supervision rules as plain Python: launch, watch, complete, notify, stop.

``Supervisor`` keeps its books in the plain ``Registry`` core and is given every
collaborator that touches the outside: the warm pool, the mailbox, a monotonic
clock, the transcript loader, the worktree finisher and a way to put the session
runtime in the object store. The Ray actor (``covey.registry.actor``) builds one
with the real ones and forwards each call; the tests build one with fakes.

A launch is one call: check, reserve, take a warm actor, start it. Every running
agent's actor is watched (a dead actor becomes a ``failed`` record and one
notification), the stall watchdog stops agents that went silent, claimed
notifications go to the owner's mailbox, and finished actors go back to the pool.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Protocol

from covey.agents.reports import record_notice
from covey.agents.transcript import rebuild_history
from covey.agents.worktree import finish_worktree_record, resume_place_problem
from covey.errors import AgentUnavailable
from covey.registry.answers import Finished, Launched, NeedRuntime, Refused
from covey.registry.core import Registry
from covey.registry.limits import Limits
from covey.registry.records import FinalReport, LaunchRequest, Status, RunRecord
from covey.actors.travel import travelling
from covey.teams.delivery import registry_delivers

log = logging.getLogger(__name__)

CANCEL_GRACE_S = 5.0
REPORT_WAIT_S = 30.0
KEPT_RUNTIMES = 4


class SupervisorProtocol(Protocol):
    """What the registry answers, in memory (``Supervisor``) or as a Ray actor (its raw calls)."""

    async def register_main(self, agent_id: str, model: str, cwd: str, prompt: str = "",
                            output_file: str | None = None, node_id: str | None = None) -> RunRecord: ...
    async def reserve(self, request: LaunchRequest) -> RunRecord | Refused: ...
    async def launch(self, request: LaunchRequest, spec: Any, follow: bool = False, lane: str = "home",
                     output_file: str | None = None, runtime_key: str | None = None,
                     ) -> Launched | Refused | NeedRuntime: ...
    def launch_many(self, launches: list[tuple[Any, ...]]) -> AsyncIterator[tuple[int, Launched | Refused | NeedRuntime]]: ...
    async def find(self, name_or_id: str) -> RunRecord | None: ...
    async def resume(self, agent_id: str) -> str | None: ...
    async def record(self, agent_id: str) -> RunRecord | None: ...
    async def records(self) -> list[RunRecord]: ...
    async def report_of(self, agent_id: str, timeout_s: float = REPORT_WAIT_S) -> FinalReport | None: ...
    async def kill_agent(self, agent_id: str, status: Status = "killed", reason: str = "killed on request") -> bool: ...
    async def to_background(self, agent_id: str) -> bool: ...
    async def outstanding(self, owner_agent_id: str) -> list[str]: ...
    async def wait_idle(self, timeout_s: float | None = None) -> bool: ...
    async def stop_all(self, reason: str, grace_s: float = CANCEL_GRACE_S) -> list[dict[str, Any]]: ...


class Supervisor:
    def __init__(
        self, limits: Limits, *, pool: Any, mailbox: Any, clock: Callable[[], float] = time.monotonic,
        load_history: Callable[[str], list[Any]] = rebuild_history,
        finish_worktree: Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]] = finish_worktree_record,
        put: Callable[[Any], Any] | None = None, place_problem: Callable[[Any], str | None] = resume_place_problem,
    ) -> None:
        self.core = Registry(limits, clock)
        self.pool, self.mailbox = pool, mailbox
        self.load_history, self.finish_worktree = load_history, finish_worktree
        self.put = put
        self.place_problem = place_problem
        """Why a finished agent's directory or worktree can no longer be trusted (a resume is refused)."""
        """Puts a runtime in the object store (``ray.put``); None: runtimes travel as themselves."""
        self.actors: dict[str, Any] = {}
        self.specs: dict[str, Any] = {}
        """Launched agents' specs without their runtime, kept while the agent may be resumed
        (to the end of the session with teams or in coordinator mode, where SendMessage reaches finished agents)."""
        self.runtime: Any = None
        """The newest session runtime: resumed agents get it."""
        self.runtimes: dict[str, Any] = {}
        """Runtimes by key, the last ``KEPT_RUNTIMES``: a launch names its spec's runtime by key."""
        self._runtime_refs: dict[str, Any] = {}
        """Those runtimes in the object store, as they are first sent to an agent actor."""
        self.watches: dict[str, asyncio.Task] = {}
        self._resuming: set[str] = set()
        self._forwarded: set[str] = set()
        """Agents whose children's notices the mailbox forwards to the main agent."""
        self._watchdog: asyncio.Task | None = None
        # asyncio keeps only weak references to tasks: hold ours until they finish.
        self._tasks: set[asyncio.Task] = set()

    # -- launch ------------------------------------------------------------------

    async def register_main(
        self, agent_id: str, model: str, cwd: str, prompt: str = "", output_file: str | None = None,
        node_id: str | None = None,
    ) -> RunRecord:
        self._start_watchdog()
        record = self.core.register_main(agent_id, model=model, cwd=cwd, prompt=prompt)
        record.output_file, record.node_id = output_file, node_id
        return record

    async def reserve(self, request: LaunchRequest) -> RunRecord | Refused:
        """The record, or the refusal (refusals are answers, not crashes)."""
        self._start_watchdog()
        return self.core.admit(request)

    async def launch(
        self, request: LaunchRequest, spec: Any, follow: bool = False, lane: str = "home", output_file: str | None = None,
        runtime_key: str | None = None,
    ) -> Launched | Refused | NeedRuntime:
        """Check and reserve, take a warm actor, start the agent on it, watch it.

        ``spec`` comes with its runtime, or without it and naming it by ``runtime_key``
        (``NeedRuntime`` is the answer if that key is not held). A failure to get an
        actor undoes the reservation: nothing half-started remains. A sync child's
        start is awaited; a background child's is sent and answered at once, as Claude
        Code registers it and returns (docs/subagents.md#the-call): if its actor then fails to start it, the
        record ends ``failed`` and its owner gets that notice.
        """
        if spec is not None and spec.runtime is not None:  # no spec: an unknown type, refused below
            runtime = self._keep_runtime(spec.runtime)
            spec = travelling(spec)
        elif runtime_key is not None:
            if (runtime := self.runtimes.get(runtime_key)) is None:
                return NeedRuntime()
        else:
            runtime = None
        answer = await self.reserve(request)
        if isinstance(answer, Refused):
            return answer
        actor, run = None, None
        try:
            actor = await self.pool.take(lane)
            if follow:
                await actor.start(spec, follow=True, runtime=runtime, runtime_ref=self._runtime_ref(runtime))
            else:  # async: registered and answered at once (docs/subagents.md#the-call); a failed start is its notice
                run = actor.run_detached(spec, runtime=runtime, runtime_ref=self._runtime_ref(runtime))
        except Exception as exc:
            self.core.abandon(request.agent_id)
            if actor is not None:
                actor.kill()
            return _not_started(exc)
        await self.track(request.agent_id, actor, output_file, getattr(actor, "node", None), run=run)
        # Kept with its model (the runtime's, shared): a resume may come under a later runtime.
        self.specs[request.agent_id] = spec.model_copy(update={"model": runtime.model}) if (
            spec.model is None and runtime is not None) else spec
        return Launched(record=answer, actor=actor if follow else None)

    async def launch_many(self, launches: list[tuple[Any, ...]]) -> AsyncIterator[tuple[int, Any]]:
        """Several launches in one call (the Agent calls of one assistant message), each
        answered as ``launch`` answers it, as ``(index, answer)`` the moment it is ready: a
        launch that gets a warm actor does not wait for one whose actor is still being
        created (its sync parent could not follow it, nor the actor be recycled). Their
        checks run in the order given: each reserves before the next one is checked (a
        task runs up to its first wait when it starts, and they start in order)."""
        async def one(index: int, args: tuple[Any, ...]) -> tuple[int, Any]:
            try:
                return index, await self.launch(*args)
            except Exception as exc:
                return index, _not_started(exc)

        for answered in asyncio.as_completed([asyncio.ensure_future(one(i, a)) for i, a in enumerate(launches)]):
            yield await answered

    async def resume(self, agent_id: str) -> str | None:
        """Wake a completed agent that was sent a message: rebuilt from its transcript (docs/subagents.md#transcripts).

        Returns a note for the sender, or None when the agent is running (it reads
        the message between turns) or cannot be resumed.
        """
        record, spec = self.core.records.get(agent_id), self.specs.get(agent_id)
        if record is None or record.live or spec is None or not record.output_file or agent_id in self._resuming:
            return None
        self._resuming.add(agent_id)  # a sender and the end-of-run check may both ask at once
        try:
            history = await asyncio.to_thread(self.load_history, record.output_file)
            if not history:
                return None
            if problem := await asyncio.to_thread(self.place_problem, spec):
                return f"{agent_id} had finished and was not resumed: {problem}"
            return await self._rerun(agent_id, record, spec, history)
        finally:
            self._resuming.discard(agent_id)

    async def _rerun(self, agent_id: str, record: RunRecord, spec: Any, history: list[Any]) -> str:
        self.core.reopen(agent_id)
        if agent_id in self._forwarded:
            self._forwarded.discard(agent_id)
            await self.mailbox.reopen(agent_id)
        try:
            actor = await self.pool.take("home")
            run = actor.run_detached(spec.model_copy(update={"history": history, "background": True}),
                                     runtime=self.runtime, runtime_ref=self._runtime_ref(self.runtime))
        except Exception as exc:
            self.core.finish(agent_id, FinalReport(status="failed", text=f"could not be resumed: {exc}"))
            return f"{agent_id} could not be resumed: {exc}"
        await self.track(agent_id, actor, record.output_file, getattr(actor, "node", None), run=run)
        return f"{agent_id} had finished; it was resumed from its transcript to read the message."

    def _keep_runtime(self, runtime: Any) -> Any:
        """The held runtime equal to ``runtime`` (same key), keeping this one if none is."""
        held = self.runtimes.setdefault(runtime.key, runtime)
        if len(self.runtimes) > KEPT_RUNTIMES:
            gone = next(iter(self.runtimes))
            del self.runtimes[gone]
            self._runtime_refs.pop(gone, None)
        self.runtime = held
        return held

    def _runtime_ref(self, runtime: Any) -> Any:
        """``runtime`` in the object store, put once per key: each new actor of a fan-out
        needs it once, and pickling it for every one of them was the registry's largest
        cost in py-spy (its agent definitions, model and three actor handles)."""
        if runtime is None or self.put is None or runtime.key not in self.runtimes:
            return None
        if (ref := self._runtime_refs.get(runtime.key)) is None:
            ref = self._runtime_refs[runtime.key] = self.put(runtime)
        return ref

    # -- the pool and the books ---------------------------------------------------

    async def take(self, lane: str = "home") -> Any:
        """A warm agent actor for an agent the registry does not launch (the main agent)."""
        return await self.pool.take(lane)

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self.pool.warm(n, lane)

    async def pool_stats(self) -> dict[str, Any]:
        return self.pool.stats()

    async def held(self) -> dict[str, int]:
        """What the registry holds per agent: records (the session's history) and the specs kept for resuming."""
        return {"records": len(self.core.records), "specs": len(self.specs), "watches": len(self.watches)}

    async def find(self, name_or_id: str) -> RunRecord | None:
        return self.core.find(name_or_id)

    async def abandon(self, agent_id: str) -> None:
        self.core.abandon(agent_id)

    async def finish_main(self, agent_id: str, report: FinalReport) -> None:
        self.core.finish(agent_id, report)

    async def progress(self, agent_id: str, **fields: Any) -> None:
        self.core.progress(agent_id, **fields)

    async def set_parked(self, agent_id: str, parked: bool, seq: int | None = None) -> None:
        self.core.set_parked(agent_id, parked, seq)

    async def to_background(self, agent_id: str) -> bool:
        return self.core.to_background(agent_id)

    async def outstanding(self, owner_agent_id: str) -> list[str]:
        return self.core.outstanding(owner_agent_id)

    async def record(self, agent_id: str) -> RunRecord | None:
        return self.core.records.get(agent_id)

    async def records(self) -> list[RunRecord]:
        return list(self.core.records.values())

    async def tree(self, agent_id: str | None = None) -> dict[str, Any]:
        return self.core.tree(agent_id)

    async def session_usage(self) -> tuple[float, dict[str, Any]]:
        return self.core.session_usage()

    async def actor_of(self, agent_id: str) -> Any:
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
        done, still = await asyncio.wait(pending, timeout=timeout_s)
        return not still

    # -- watching ----------------------------------------------------------------

    async def track(
        self, agent_id: str, actor: Any, output_file: str | None = None, node_id: str | None = None, run: Any = None,
    ) -> None:
        """Watch a started agent's actor until its run ends or the actor dies; ``run``: the
        call that starts it and answers at its end (default: ``finish`` on a started run)."""
        record = self.core.records.get(agent_id)
        if record is not None:
            record.output_file, record.node_id = output_file, node_id
            record.last_activity = self.core.clock()  # the stall clock starts when the agent does
            record.started_at = time.time()
        self.actors[agent_id] = actor
        self.watches[agent_id] = asyncio.create_task(self._watch(agent_id, actor, run))

    async def _watch(self, agent_id: str, actor: Any, run: Any = None) -> None:
        report, clean, reusable = await self._outcome(agent_id, actor, run)
        try:
            await self._complete(agent_id, report)
        except Exception:
            log.exception("completing %s failed", agent_id)
        finally:
            self.actors.pop(agent_id, None)
            self.watches.pop(agent_id, None)
            if reusable:
                self._spawn(self.pool.give_back(actor, clean))
            else:
                actor.kill()

    async def _outcome(self, agent_id: str, actor: Any, run: Any) -> tuple[FinalReport, bool | None, bool]:
        """How the watched run ended: its report, how its actor reset, whether the actor may serve again."""
        try:
            finished: Finished = await (run if run is not None else actor.finish())
            return finished.report, finished.clean, True
        except AgentUnavailable as exc:
            report = FinalReport(status="failed", text=f"The agent's actor died: {_first_line(exc)}",
                                 worktree=await self._dead_agents_worktree(agent_id))
        except Exception as exc:  # a watch never takes the registry down with it
            doing = "started" if run is not None else "watched"
            report = FinalReport(status="failed", text=f"The agent could not be {doing}: {_first_line(exc)}")
        return report, None, False

    async def _dead_agents_worktree(self, agent_id: str) -> dict[str, Any] | None:
        """An agent whose actor died ran no cleanup: its worktree is removed here if
        unchanged, else kept and reported (the registry runs where the files are)."""
        spec = self.specs.get(agent_id)
        if spec is None or not spec.worktree:
            return None
        try:
            return await self.finish_worktree(spec.worktree)
        except Exception:  # a worktree that cannot be looked at is left, as a kept one
            log.exception("cleaning the worktree of %s failed", agent_id)
            return {**spec.worktree.model_dump(), "kept": True}

    # -- completion --------------------------------------------------------------

    async def _complete(self, agent_id: str, report: FinalReport) -> None:
        self.core.finish(agent_id, report)
        await self._forward_orphans(agent_id)
        released = await self._release_team_tasks(agent_id)
        await self._notify(agent_id, released, report)
        await self._resume_if_mail_waits(agent_id)
        record = self.core.records.get(agent_id)
        if not self._messaging() and (record is None or not record.live):
            self.specs.pop(agent_id, None)  # nothing can resume it: only SendMessage does (teams, coordinator mode)

    async def _notify(self, agent_id: str, released: list[Any], report: FinalReport) -> None:
        """Deliver the ended agent's one notification (a sync child's report went to its caller).

        A background agent usually put its own already (``report.delivered_at``). If
        it did and its actor died before saying so, the mailbox drops this second
        notice: both carry the run's ``notice_key``.
        """
        record = self.core.claim_notification(agent_id)
        if record is None:
            return
        try:
            if not registry_delivers(report.delivered_at):  # its actor put it (``covey.teams.delivery``)
                record.notified_at = report.delivered_at
                return
            target = self.core.notify_target(record)
            if target is None:
                return
            await self.mailbox.put(target, record_notice(record, released))
            record.notified_at = time.time()
        finally:
            self.core.delivered(agent_id)

    async def _forward_orphans(self, agent_id: str) -> None:
        """An agent ended while background children it owns still run, or was killed with
        their notices unread: the mailbox sends those, queued and to come, on to the main
        agent (docs/subagents.md#what-the-parent-gets-back)."""
        if self.core.notices_go_to_main(agent_id):
            self._forwarded.add(agent_id)
            await self.mailbox.close(agent_id, self.core.main_agent_id)

    async def _resume_if_mail_waits(self, agent_id: str) -> None:
        """A leaf agent ends without a last look at its mailbox (that would cost every
        child a round trip): mail that came during its last turn resumes it, as mail to a
        finished agent does (docs/teams.md). Teammates drain before they end; killed or failed
        agents stay ended."""
        record, spec = self.core.records.get(agent_id), self.specs.get(agent_id)
        if record is None or record.status != "completed" or spec is None or spec.team:
            return
        if not self._messaging() and not any(child.background for child in self.core.children(agent_id)):
            return  # nobody could have written to it (the inbox rule: ``inbox_for``)
        if await self.mailbox.pending(agent_id) > 0:
            await self.resume(agent_id)

    def _messaging(self) -> bool:
        """Whether SendMessage may resume a finished agent: with teams, and in coordinator mode."""
        return self.runtime is not None and self.runtime.messaging

    async def _release_team_tasks(self, agent_id: str) -> list[Any]:
        """A teammate that ended gives back its unfinished tasks (docs/teams.md) and leaves the roster."""
        record, spec = self.core.records.get(agent_id), self.specs.get(agent_id)
        team = spec.team if spec is not None else None
        if record is None or not team:
            return []
        try:
            released = await team.board.release_owner(team.member)
            await team.roster.remove(agent_id)
            return released
        except Exception:  # a gone team has nothing to release; the notice still goes out
            log.exception("releasing the tasks of %s failed", agent_id)
            return []

    # -- stopping ----------------------------------------------------------------

    async def kill_agent(self, agent_id: str, status: Status = "killed", reason: str = "killed on request") -> bool:
        """End a running agent: its cleanup runs, its owner is notified once."""
        record = self.core.records.get(agent_id)
        actor = self.actors.get(agent_id)
        if record is None or not record.live or actor is None:
            return False
        await self._stop(agent_id, actor, status, reason)
        return True

    async def stop_all(self, reason: str, grace_s: float = CANCEL_GRACE_S) -> list[dict[str, Any]]:
        """Stop every running agent the registry launched (the run is over: interrupted, or
        a session actor died): their cleanup runs and their owners are notified. Returns
        the worktrees that were kept, as their reports name them."""
        live = [(agent_id, actor) for agent_id, actor in list(self.actors.items())
                if (record := self.core.records.get(agent_id)) is not None and record.live]
        await asyncio.gather(*(self._stop(agent_id, actor, "killed", reason) for agent_id, actor in live))
        await self.wait_idle(grace_s)
        return [r.worktree for r in self.core.records.values() if r.worktree and r.worktree.get("kept")]

    async def _stop(self, agent_id: str, actor: Any, status: Status, reason: str) -> None:
        # Record the cause first, so the watch's report cannot overwrite it.
        self.core.finish(agent_id, FinalReport(status=status, text=reason))
        try:
            await asyncio.wait_for(actor.cancel(status, reason, agent_id), CANCEL_GRACE_S)
        except (asyncio.TimeoutError, AgentUnavailable):
            actor.kill()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- the stall watchdog ------------------------------------------------------

    def _start_watchdog(self) -> None:
        if self._watchdog is None:
            self._watchdog = asyncio.create_task(self._watch_stalls())

    async def _watch_stalls(self) -> None:
        tick_s = min(1.0, self.core.limits.stall_ms / 4000)
        while True:
            await asyncio.sleep(tick_s)
            try:
                self.stop_stalled()
            except Exception:  # one bad tick must not end the watchdog
                log.exception("stall watchdog tick failed")

    def stop_stalled(self) -> list[str]:
        """One watchdog tick: start stopping every stalled agent; their ids."""
        stopping = []
        for agent_id in self.core.stalled():
            # A reserved agent whose actor is still starting is not stalled.
            if (actor := self.actors.get(agent_id)) is not None:
                reason = f"stalled: no message or tool progress for {self.core.limits.stall_ms} ms"
                self._spawn(self._stop(agent_id, actor, "failed", reason))
                stopping.append(agent_id)
        return stopping

    async def close(self) -> None:
        """Stop the watchdog and the give-backs in flight (an in-memory supervisor's end; a
        Ray actor's end stops them with its process)."""
        for task in [self._watchdog, *self._tasks]:
            if task is not None:
                task.cancel()
        self._watchdog = None


def _not_started(exc: BaseException) -> Refused:
    return Refused(kind="start", text=f"The agent could not be started: {exc}")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
