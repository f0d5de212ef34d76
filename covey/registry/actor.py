"""The registry as a Ray actor: the core's rules plus what needs a live process.

It owns the session's warm pool, so a launch is one call: check, reserve,
take a warm actor, start it. It watches every running agent's actor (a dead
actor becomes a ``failed`` record and one notification), runs the stall
watchdog, delivers claimed notifications to the owner's mailbox, and hands
finished actors back to the pool.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, AsyncIterator

import ray
from ray.exceptions import RayActorError

from covey.actors.base import ActorHandle, _first_line
from covey.actors.handle import AgentHandle
from covey.actors.pool import AgentFactory, WarmPool
from covey.agents.reports import notification_text, released_text
from covey.agents.transcript import rebuild_history
from covey.agents.worktree import Worktree, finish_worktree
from covey.errors import AgentUnavailable, CoveyError, LimitExceeded
from covey.registry.core import Registry
from covey.registry.limits import Limits
from covey.registry.records import FinalReport, LaunchRequest, Status, TaskRecord
from covey.runtime import travelling
from covey.teams.messages import TaskNotice

log = logging.getLogger(__name__)

CANCEL_GRACE_S = 5.0
REPORT_WAIT_S = 30.0
KEPT_RUNTIMES = 4
NEED_RUNTIME = "covey:need-runtime"
"""A launch's answer when it named a runtime key the registry does not hold: send it whole."""


class _RegistryActor:
    def __init__(
        self, limits: Limits, mailbox: Any, session_id: str = "", pool_sizes: dict[str, int] | None = None,
        home_node_id: str | None = None, preload: tuple[str, ...] = (),
    ) -> None:
        self.core = Registry(limits)
        self.mailbox = mailbox
        peers = (ray.get_runtime_context().current_actor, mailbox)
        factory = AgentFactory(session_id, home_node_id, preload=preload, peers=peers)
        self.pool = WarmPool(factory.create, pool_sizes or {})
        for lane in pool_sizes or {}:
            self.pool.fill(lane)
        self.actors: dict[str, Any] = {}
        self.specs: dict[str, Any] = {}
        """Launched agents' specs without their runtime, kept while the agent may be resumed
        (to the end of the session with teams, where SendMessage reaches finished agents)."""
        self.runtime: Any = None
        """The newest session runtime: resumed agents get it."""
        self.runtimes: dict[str, Any] = {}
        """Runtimes by key, the last ``KEPT_RUNTIMES``: a launch names its spec's runtime by key."""
        self._runtime_refs: dict[str, Any] = {}
        """Those runtimes in Ray's object store, as they are first sent to an agent actor."""
        self.watches: dict[str, asyncio.Task] = {}
        self._resuming: set[str] = set()
        self._forwarded: set[str] = set()
        """Agents whose children's notices the mailbox forwards to the main agent."""
        self._watchdog: asyncio.Task | None = None
        # asyncio keeps only weak references to tasks: hold ours until they finish.
        self._tasks: set[asyncio.Task] = set()

    async def register_main(
        self, agent_id: str, model: str, cwd: str, prompt: str = "", output_file: str | None = None,
        node_id: str | None = None,
    ) -> TaskRecord:
        self._start_watchdog()
        record = self.core.register_main(agent_id, model=model, cwd=cwd, prompt=prompt)
        record.output_file, record.node_id = output_file, node_id
        return record

    async def reserve(self, request: LaunchRequest) -> TaskRecord | str:
        """The record, or the refusal's message (refusals are answers, not crashes)."""
        self._start_watchdog()
        try:
            return self.core.reserve(request)
        except CoveyError as exc:
            return str(exc)

    async def launch(
        self, request: LaunchRequest, spec: Any, follow: bool = False, lane: str = "home", output_file: str | None = None,
        runtime_key: str | None = None,
    ) -> tuple[TaskRecord, AgentHandle | None] | str:
        """Check and reserve, take a warm actor, start the agent on it, watch it.

        ``spec`` comes with its runtime, or without it and naming it by ``runtime_key``
        (``NEED_RUNTIME`` is the answer if that key is not held). Returns the record and,
        for a followed (sync) child, the actor; or the refusal's message. A failure to
        get an actor undoes the reservation: nothing half-started remains. A sync child's
        start is awaited; a background child's is sent and answered at once, as Claude
        Code registers it and returns (SPEC 3): if its actor then fails to start it, the
        record ends ``failed`` and its owner gets that notice.
        """
        if spec is not None and spec.runtime is not None:  # no spec: an unknown type, refused below
            runtime = self._keep_runtime(spec.runtime)
            spec = travelling(spec)
        elif runtime_key is not None:
            if (runtime := self.runtimes.get(runtime_key)) is None:
                return NEED_RUNTIME
        else:
            runtime = None
        answer = await self.reserve(request)
        if isinstance(answer, str):
            return answer
        actor, run = None, None
        try:
            actor = await self.pool.take(lane)
            if follow:
                await actor.start(spec, follow=True, runtime=runtime, runtime_ref=self._runtime_ref(runtime))
            else:  # async: registered and answered at once (SPEC 3); a failed start is its notice
                run = actor.run_detached(spec, runtime=runtime, runtime_ref=self._runtime_ref(runtime))
        except Exception as exc:
            self.core.abandon(request.agent_id)
            if actor is not None:
                actor.kill()
            return f"The agent could not be started: {exc}"
        await self.track(request.agent_id, actor, output_file, getattr(actor, "node", None), run=run)
        # Kept with its model (the runtime's, shared): a resume may come under a later runtime.
        self.specs[request.agent_id] = spec.model_copy(update={"model": runtime.model}) if (
            spec.model is None and runtime is not None) else spec
        # Only a sync caller follows the actor; a handle costs a GCS subscription where it lands.
        return answer, actor if follow else None

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
                return index, f"The agent could not be started: {exc}"

        for answered in asyncio.as_completed([asyncio.ensure_future(one(i, a)) for i, a in enumerate(launches)]):
            yield await answered

    async def find(self, name_or_id: str) -> TaskRecord | None:
        return self.core.find(name_or_id)

    async def resume(self, agent_id: str) -> str | None:
        """Wake a completed agent that was sent a message: rebuilt from its transcript (SPEC 11).

        Returns a note for the sender, or None when the agent is running (it reads
        the message between turns) or cannot be resumed.
        """
        record, spec = self.core.records.get(agent_id), self.specs.get(agent_id)
        if record is None or record.live or spec is None or not record.output_file or agent_id in self._resuming:
            return None
        self._resuming.add(agent_id)  # a sender and the end-of-run check may both ask at once
        try:
            history = await asyncio.to_thread(rebuild_history, record.output_file)
            if not history:
                return None
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
        finally:
            self._resuming.discard(agent_id)
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
        """``runtime`` in Ray's object store, put once per key: each new actor of a fan-out
        needs it once, and pickling it for every one of them was the registry's largest
        cost in py-spy (its agent definitions, model and three actor handles)."""
        if runtime is None or runtime.key not in self.runtimes:
            return None
        if (ref := self._runtime_refs.get(runtime.key)) is None:
            ref = self._runtime_refs[runtime.key] = ray.put(runtime)
        return ref

    async def take(self, lane: str = "home") -> AgentHandle:
        """A warm agent actor for an agent the registry does not launch (the main agent)."""
        return await self.pool.take(lane)

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self.pool.warm(n, lane)

    async def pool_stats(self) -> dict[str, Any]:
        return self.pool.stats()

    async def held(self) -> dict[str, int]:
        """What the registry holds per agent: records (the session's history) and the specs kept for resuming."""
        return {"records": len(self.core.records), "specs": len(self.specs), "watches": len(self.watches)}

    async def abandon(self, agent_id: str) -> None:
        self.core.abandon(agent_id)

    async def track(
        self, agent_id: str, actor: Any, output_file: str | None = None, node_id: str | None = None, run: Any = None,
    ) -> None:
        """Watch a started agent's actor until its run ends or the actor dies; ``run``: the
        call that starts it and answers at its end (default: ``finish`` on a started run)."""
        record = self.core.records.get(agent_id)
        if record is not None:
            record.output_file, record.node_id = output_file, node_id
            record.last_activity = time.monotonic()  # the stall clock starts when the agent does
            record.started_at = time.time()
        self.actors[agent_id] = actor
        self.watches[agent_id] = asyncio.create_task(self._watch(agent_id, actor, run))

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

    async def kill_agent(self, agent_id: str, status: Status = "killed", reason: str = "killed on request") -> bool:
        """End a running agent: its cleanup runs, its owner is notified once."""
        record = self.core.records.get(agent_id)
        actor = self.actors.get(agent_id)
        if record is None or not record.live or actor is None:
            return False
        await self._stop(agent_id, actor, status, reason)
        return True

    async def record(self, agent_id: str) -> TaskRecord | None:
        return self.core.records.get(agent_id)

    async def report_of(self, agent_id: str, timeout_s: float = REPORT_WAIT_S) -> FinalReport | None:
        """The report of ``agent_id``'s ended run, once its watch has recorded it (a sync
        parent whose event stream broke asks this); None if it has not ended in time."""
        if (watch := self.watches.get(agent_id)) is not None:
            await asyncio.wait({watch}, timeout=timeout_s)  # waits without cancelling the watch
        record = self.core.records.get(agent_id)
        return record.report if record is not None and not record.live else None

    async def actor_of(self, agent_id: str) -> Any:
        """The handle of a running agent's actor (``covey kill``, tests), or None."""
        return self.actors.get(agent_id)

    async def records(self) -> list[TaskRecord]:
        return list(self.core.records.values())

    async def tree(self, agent_id: str | None = None) -> dict[str, Any]:
        return self.core.tree(agent_id)

    async def session_usage(self) -> tuple[float, dict[str, Any]]:
        return self.core.session_usage()

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        """Wait until no watch is running (every agent ended and was reported)."""
        pending = [t for t in list(self.watches.values()) if not t.done()]
        if not pending:
            return True
        done, still = await asyncio.wait(pending, timeout=timeout_s)
        return not still

    async def stop_all(self, reason: str, grace_s: float = CANCEL_GRACE_S) -> list[dict[str, Any]]:
        """Stop every running agent the registry launched (the run is over: interrupted, or
        a session actor died): their cleanup runs and their owners are notified. Returns
        the worktrees that were kept, as their reports name them."""
        live = [(agent_id, actor) for agent_id, actor in list(self.actors.items())
                if (record := self.core.records.get(agent_id)) is not None and record.live]
        await asyncio.gather(*(self._stop(agent_id, actor, "killed", reason) for agent_id, actor in live))
        await self.wait_idle(grace_s)
        return [r.worktree for r in self.core.records.values() if r.worktree and r.worktree.get("kept")]

    async def sentinel(self) -> None:
        """Never answers: the session learns of this actor's death by the call failing."""
        await asyncio.Event().wait()

    # -- internals ---------------------------------------------------------------

    async def _watch(self, agent_id: str, actor: Any, run: Any = None) -> None:
        clean = None
        try:
            report, clean = await (run if run is not None else actor.finish())
            reusable = True
        except AgentUnavailable as exc:
            report = FinalReport(status="failed", text=f"The agent's actor died: {_first_line(exc)}",
                                 worktree=await self._dead_agents_worktree(agent_id))
            reusable = False
        except Exception as exc:  # a watch never takes the registry down with it
            doing = "started" if run is not None else "watched"
            report = FinalReport(status="failed", text=f"The agent could not be {doing}: {_first_line(exc)}")
            reusable = False
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

    async def _dead_agents_worktree(self, agent_id: str) -> dict[str, Any] | None:
        """An agent whose actor died ran no cleanup: its worktree is removed here if
        unchanged, else kept and reported (the registry runs where the files are)."""
        spec = self.specs.get(agent_id)
        if spec is None or not spec.worktree:
            return None
        try:
            outcome = await finish_worktree(Worktree(**spec.worktree))
        except Exception:  # a worktree that cannot be looked at is left, as a kept one
            log.exception("cleaning the worktree of %s failed", agent_id)
            return {**spec.worktree, "kept": True}
        return outcome.model_dump(exclude_none=True) if outcome.kept else None

    async def _complete(self, agent_id: str, report: FinalReport) -> None:
        self.core.finish(agent_id, report)
        await self._forward_orphans(agent_id)
        released = await self._release_team_tasks(agent_id)
        await self._notify(agent_id, released, report)
        await self._resume_if_mail_waits(agent_id)
        record = self.core.records.get(agent_id)
        if not self._teams() and (record is None or not record.live):
            self.specs.pop(agent_id, None)  # nothing can resume it: only SendMessage does, with teams

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
            if report.delivered_at is not None:
                record.notified_at = report.delivered_at
                return
            target = self.core.notify_target(record)
            if target is None:
                return
            text = notification_text(record) + released_text(released)
            notice = TaskNotice(task_id=agent_id, status=record.status, text=text, key=record.notice_key)
            await self.mailbox.put(target, notice)
            record.notified_at = time.time()
        finally:
            self.core.delivered(agent_id)

    async def _forward_orphans(self, agent_id: str) -> None:
        """An agent ended while background children it owns still run, or was killed with
        their notices unread: the mailbox sends those, queued and to come, on to the main
        agent (SPEC 10)."""
        if self.core.notices_go_to_main(agent_id):
            self._forwarded.add(agent_id)
            await self.mailbox.close(agent_id, self.core.main_agent_id)

    async def _resume_if_mail_waits(self, agent_id: str) -> None:
        """A leaf agent ends without a last look at its mailbox (that would cost every
        child a round trip): mail that came during its last turn resumes it, as mail to a
        finished agent does (SPEC 13). Teammates drain before they end; killed or failed
        agents stay ended."""
        record, spec = self.core.records.get(agent_id), self.specs.get(agent_id)
        if record is None or record.status != "completed" or spec is None or spec.team:
            return
        if not self._teams() and not any(child.background for child in self.core.children(agent_id)):
            return  # nobody could have written to it (the inbox rule: ``inbox_for``)
        if await self.mailbox.pending(agent_id) > 0:
            await self.resume(agent_id)

    def _teams(self) -> bool:
        return self.runtime is not None and self.runtime.teams

    async def _release_team_tasks(self, agent_id: str) -> list[Any]:
        """A teammate that ended gives back its unfinished tasks (SPEC 13) and leaves the roster."""
        record, spec = self.core.records.get(agent_id), self.specs.get(agent_id)
        team = spec.team if spec is not None else None
        if record is None or not team:
            return []
        try:
            released = await team["board"].release_owner(team["member"])
            await team["roster"].remove(agent_id)
            return released
        except Exception:  # a gone team has nothing to release; the notice still goes out
            log.exception("releasing the tasks of %s failed", agent_id)
            return []

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

    def _start_watchdog(self) -> None:
        if self._watchdog is None:
            self._watchdog = asyncio.create_task(self._watch_stalls())

    async def _watch_stalls(self) -> None:
        tick_s = min(1.0, self.core.limits.stall_ms / 4000)
        while True:
            await asyncio.sleep(tick_s)
            try:
                for agent_id in self.core.stalled():
                    # A reserved agent whose actor is still starting is not stalled.
                    if (actor := self.actors.get(agent_id)) is not None:
                        reason = f"stalled: no message or tool progress for {self.core.limits.stall_ms} ms"
                        self._spawn(self._stop(agent_id, actor, "failed", reason))
            except Exception:  # one bad tick must not end the watchdog
                log.exception("stall watchdog tick failed")


def _answer(waiting: asyncio.Future, answer: Any) -> None:
    if waiting.done():  # answered already, or its caller gave up waiting
        return
    if isinstance(answer, Exception):
        waiting.set_exception(answer)
    else:
        waiting.set_result(answer)


def registry_actor_class(**options: Any):
    # No Ray task events for its calls: several per agent, and nobody looks for them in the dashboard.
    return ray.remote(num_cpus=0, max_restarts=0, enable_task_events=False, **options)(_RegistryActor)


class RegistryHandle(ActorHandle):
    def __init__(self, actor: Any, name: str = "") -> None:
        super().__init__(actor, name)
        self._runtime_sent: dict[str, asyncio.Future[bool]] = {}
        """Runtime keys this handle has sent the registry: done, or on their way."""
        self._batch: list[tuple[tuple[Any, ...], asyncio.Future]] = []
        """Launches made since the event loop last came round: they go in one call."""
        self._sending: set[asyncio.Task] = set()

    async def register_main(
        self, agent_id: str, model: str, cwd: str, prompt: str = "", output_file: str | None = None,
        node_id: str | None = None,
    ) -> TaskRecord:
        return await self.call("register_main", agent_id, model, cwd, prompt, output_file, node_id)

    async def reserve(self, request: LaunchRequest) -> TaskRecord:
        """The new record; raises ``LimitExceeded`` with the refusal's message if a check fails."""
        answer = await self.call("reserve", request)
        if isinstance(answer, str):
            raise LimitExceeded(answer)
        return answer

    async def launch(
        self, request: LaunchRequest, spec: Any, *, follow: bool = False, lane: str = "home",
        output_file: str | None = None,
    ) -> tuple[TaskRecord, AgentHandle | None]:
        """Reserve, take, start and watch; raises ``LimitExceeded`` with the refusal's message.

        The actor comes back for a followed (sync) launch only. The spec's runtime
        travels once per handle and key; later launches name it by key.
        """
        runtime = spec.runtime if spec is not None else None
        if runtime is not None and await self._registry_holds(runtime.key):
            answer = await self._batched((request, travelling(spec), follow, lane, output_file, runtime.key))
            if answer != NEED_RUNTIME:
                return self._launched(answer)
            self._runtime_sent.pop(runtime.key, None)
        sending = None
        if runtime is not None and runtime.key not in self._runtime_sent:
            sending = self._runtime_sent[runtime.key] = asyncio.get_running_loop().create_future()
        try:
            answer = await self.call("launch", request, spec, follow, lane, output_file)
        finally:
            if sending is not None and not sending.done():
                sending.set_result(True)  # the registry has it, whatever the answer was
        return self._launched(answer)

    def _batched(self, launch: tuple[Any, ...]) -> asyncio.Future:
        """The answer to ``launch``, sent with the other launches made in this turn of the
        event loop: the Agent calls of one message reach the registry in one call, not one
        each (their tool calls run concurrently, so they arrive here together)."""
        loop = asyncio.get_running_loop()
        if not self._batch:
            loop.call_soon(self._send_batch)
        answer = loop.create_future()
        self._batch.append((launch, answer))
        return answer

    def _send_batch(self) -> None:
        batch, self._batch = self._batch, []
        task = asyncio.ensure_future(self._deliver(batch))
        self._sending.add(task)  # asyncio keeps only a weak reference
        task.add_done_callback(self._sending.discard)

    async def _deliver(self, batch: list[tuple[tuple[Any, ...], asyncio.Future]]) -> None:
        waiting = [future for _, future in batch]
        try:
            if len(batch) == 1:
                _answer(waiting[0], await self.call("launch", *batch[0][0]))
                return
            async for ref in self.actor.launch_many.remote([launch for launch, _ in batch]):
                index, answer = await ref
                _answer(waiting[index], answer)
        except Exception as exc:  # the registry is gone: every caller still waiting hears it
            if isinstance(exc, RayActorError):
                exc = AgentUnavailable(f"actor {self.name!r} is gone: {_first_line(exc)}")
            for future in waiting:
                _answer(future, exc)

    async def _registry_holds(self, key: str) -> bool:
        """Whether the registry has this runtime; a launch sending it right now is awaited,
        so twenty launches in one message send it once, not twenty times."""
        sent = self._runtime_sent.get(key)
        if sent is None:
            return False
        try:
            return await asyncio.shield(sent)
        except Exception:
            return False

    @staticmethod
    def _launched(answer: Any) -> tuple[TaskRecord, AgentHandle | None]:
        if isinstance(answer, str):
            raise LimitExceeded(answer)
        return answer

    async def take(self, lane: str = "home") -> AgentHandle:
        return await self.call("take", lane)

    async def find(self, name_or_id: str) -> TaskRecord | None:
        return await self.call("find", name_or_id)

    async def resume(self, agent_id: str) -> str | None:
        return await self.call("resume", agent_id)

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self.call("warm", n, lane)

    async def pool_stats(self) -> dict[str, Any]:
        return await self.call("pool_stats")

    async def held(self) -> dict[str, int]:
        return await self.call("held")

    async def abandon(self, agent_id: str) -> None:
        await self.call("abandon", agent_id)

    async def track(self, agent_id: str, actor: Any, output_file: str | None = None, node_id: str | None = None) -> None:
        await self.call("track", agent_id, actor, output_file, node_id)

    async def to_background(self, agent_id: str) -> bool:
        return await self.call("to_background", agent_id)

    async def outstanding(self, owner_agent_id: str) -> list[str]:
        """The keys of the notices this agent's background children may still send it."""
        return await self.call("outstanding", owner_agent_id)

    async def kill_agent(self, agent_id: str, reason: str = "killed on request") -> bool:
        return await self.call("kill_agent", agent_id, "killed", reason)

    async def record(self, agent_id: str) -> TaskRecord | None:
        return await self.call("record", agent_id)

    async def report_of(self, agent_id: str) -> FinalReport | None:
        """The ended run's report as the registry recorded it; None if the registry is gone too."""
        try:
            return await self.call("report_of", agent_id)
        except AgentUnavailable:
            return None

    async def records(self) -> list[TaskRecord]:
        return await self.call("records")

    async def tree(self, agent_id: str | None = None) -> dict[str, Any]:
        return await self.call("tree", agent_id)

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        return await self.call("wait_idle", timeout_s)

    async def stop_all(self, reason: str) -> list[dict[str, Any]]:
        """Stop every running sub-agent; the worktrees kept by their cleanup."""
        return await self.call("stop_all", reason)
