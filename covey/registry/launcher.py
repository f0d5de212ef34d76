"""A launch is one call: check, reserve, take a warm actor, start it, watch it.

``spec`` comes with its runtime, or without it and naming it by ``runtime_key``
(``NeedRuntime`` is the answer if that key is not held: ``covey.runtime.travel``).
A launch past the concurrency limit waits in the queue; ``Launcher`` keeps what starts it.
An agent that asks for Ray resources may wait for Ray to place its actor: why is on its record
(``waiting_for``, shown by ``covey ps``), and a background one is answered before it is placed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Generic

from covey.ray.resources import placement_wait, resources_of
from covey.registry import events
from covey.registry.books import Books
from covey.registry.watcher import Watcher
from covey.runtime.answers import Finished, LaunchAnswer, Launched, NeedRuntime, Refused, not_started
from covey.runtime.ports import H
from covey.runtime.records import FinalReport, LaunchRequest, RunRecord
from covey.runtime.travel import travelling

if TYPE_CHECKING:
    from covey.runtime.ports import SessionRuntime
    from covey.runtime.spec import AgentSpec


PLACEMENT_NOTE_S = 1.0
"""How long Ray may take to place an actor that asks for resources before its record says why it waits."""


@dataclass(frozen=True)
class Waiting:
    """How to start a queued launch when its turn comes: ``launch``'s arguments, its runtime held."""

    spec: AgentSpec
    runtime: SessionRuntime | None
    lane: str
    output_file: str | None


class Launcher(Generic[H]):
    """Launches: checked, reserved, started on a warm actor and watched; queued ones started in their turn."""

    def __init__(self, books: Books[H], watcher: Watcher[H]) -> None:
        self.books, self.watcher = books, watcher
        self.waiting: dict[str, Waiting] = {}
        """The queued launches' starts, by agent id (their order is the core's ``queue``)."""
        self.placing: dict[str, asyncio.Future[H]] = {}
        """The actors Ray has not placed yet, by agent id: a kill gives them up (``give_up_placing``)."""
        books.core.on_dequeue = self._dequeued

    async def register_main(self, agent_id: str, model: str, cwd: str, prompt: str = "",
                            output_file: str | None = None, node_id: str | None = None) -> RunRecord:
        record = self.books.core.register_main(agent_id, model=model, cwd=cwd, prompt=prompt)
        record.output_file, record.node_id = output_file, node_id
        self.books.journal.record(events.MainRegistered(record))
        return record

    async def reserve(self, request: LaunchRequest) -> RunRecord | Refused:
        """The record, or the refusal (refusals are answers, not crashes)."""
        return self.books.core.admit(request)

    async def launch(self, request: LaunchRequest, spec: AgentSpec | None, follow: bool = False, lane: str = "home",
                     output_file: str | None = None, runtime_key: str | None = None) -> LaunchAnswer:
        """Check and reserve, take a warm actor, start the agent on it, watch it.

        A failure to get an actor undoes the reservation: nothing half-started remains.
        A sync child's start is awaited; a background child's is sent and answered at
        once, as Claude Code registers it and returns (docs/subagents.md#the-call): if
        its actor then fails to start it, the record ends ``failed`` and its owner gets that notice.
        A queued one (past the concurrency limit, with ``queue_spawns``) is answered at once
        too, and started when its turn comes (``_dequeued``).
        """
        if (known := self.books.core.records.get(request.agent_id)) is not None:  # sent again: a restarted registry
            return Launched(record=known, actor=self.books.actors.get(request.agent_id) if follow else None)
        runtime: SessionRuntime | None = None
        if spec is not None and spec.runtime is not None:  # no spec: an unknown type, refused below
            runtime = self.books.runtimes.keep(spec.runtime)
            spec = travelling(spec)
        elif runtime_key is not None and (runtime := self.books.runtimes.get(runtime_key)) is None:
            return NeedRuntime()
        answer = await self.reserve(request)
        if isinstance(answer, Refused):
            return answer
        if spec is None:  # the checks refuse an unknown type; a caller that sent none anyway
            self.books.core.abandon(request.agent_id)
            return not_started(ValueError("no agent spec was sent"))
        if answer.queued:
            answer.output_file = output_file
            self.waiting[request.agent_id] = Waiting(spec, runtime, lane, output_file)
            self._keep_spec(request.agent_id, spec, runtime)  # a kill before its start cleans its worktree
            # Journaled before it is answered: a restarted registry starts it still.
            self.books.journal.record(events.Queued(answer, spec, runtime, lane, output_file))
            return Launched(record=answer)
        if not follow and resources_of(lane) is not None:  # Ray may hold it for long: answered now
            self.waiting[request.agent_id] = Waiting(spec, runtime, lane, output_file)
            # Journaled as queued until it starts: a registry restarted while Ray held it (its pending
            # actor went with the old one) launches it again rather than leave its owner waiting.
            self.books.journal.record(events.Queued(answer, spec, runtime, lane, output_file))
            self.books.spawn(self._start_queued(request.agent_id))
            return Launched(record=answer)
        try:
            actor = await self._start(request.agent_id, spec, runtime, follow, lane, output_file)
        except Exception as exc:
            self.books.core.abandon(request.agent_id)
            return not_started(exc)
        return Launched(record=answer, actor=actor if follow else None)

    async def _start(self, agent_id: str, spec: AgentSpec, runtime: SessionRuntime | None, follow: bool, lane: str,
                     output_file: str | None) -> H:
        """Take an actor for a reserved agent, start the agent on it and watch it; the actor.
        A failure kills the actor it took and raises (the caller undoes or fails the record)."""
        actor: H | None = None
        run: Awaitable[Finished] | None = None
        try:
            actor = await self._take(agent_id, lane)
            if (record := self.books.core.records.get(agent_id)) is not None:
                self.books.journal.record(events.Started(record, spec, actor, runtime, output_file))
            ref = self.books.runtimes.ref(runtime)
            if follow:
                await actor.start(spec, follow=True, runtime=runtime, runtime_ref=ref)
            else:  # async: registered and answered at once (docs/subagents.md#the-call); a failed start is its notice
                run = actor.run_detached(spec, runtime=runtime, runtime_ref=ref)
        except Exception:
            if actor is not None:
                actor.kill()
            raise
        await self.watcher.track(agent_id, actor, output_file, actor.node, run=run)
        self._keep_spec(agent_id, spec, runtime)
        return actor

    async def _take(self, agent_id: str, lane: str) -> H:
        """A warm actor; for one asking for resources, a new one, and while Ray holds it the
        record says why (a cancelled launch cancels the take, which kills the pending actor)."""
        record = self.books.core.records.get(agent_id)
        if (resources := resources_of(lane)) is None or record is None:
            return await self.books.pool.take(lane)
        take = self.placing[agent_id] = asyncio.ensure_future(self.books.pool.take(lane))
        try:
            done, _ = await asyncio.wait({take}, timeout=PLACEMENT_NOTE_S)
            if not done:
                record.waiting_for = placement_wait(resources)
            return await take
        except asyncio.CancelledError:
            if take.cancelled() and self.placing.get(agent_id) is not take:  # given up: not the caller's cancel
                raise RuntimeError("it was stopped while Ray held it, before it started") from None
            raise
        finally:
            if self.placing.get(agent_id) is take:
                del self.placing[agent_id]
            record.waiting_for = None

    def give_up_placing(self, agent_id: str) -> bool:
        """Stop waiting for Ray to place the agent's actor; False if it is not waiting."""
        if (take := self.placing.pop(agent_id, None)) is None:
            return False
        take.cancel()
        return True

    def _keep_spec(self, agent_id: str, spec: AgentSpec, runtime: SessionRuntime | None) -> None:
        # Kept with its model (the runtime's, shared): a resume may come under a later runtime.
        self.books.specs[agent_id] = spec.model_copy(update={"model": runtime.model}) if (
            spec.model is None and runtime is not None) else spec

    # -- queued launches (docs/subagents.md#queued-spawns) ------------------------------

    def _dequeued(self, record: RunRecord) -> None:
        self.books.spawn(self._start_queued(record.agent_id))

    def forget(self, agent_id: str) -> None:
        """A queued launch that will never start (it left the queue, ended): its start is not kept."""
        self.waiting.pop(agent_id, None)

    def requeue(self, record: RunRecord, spec: AgentSpec, runtime: SessionRuntime | None, lane: str,
                output_file: str | None) -> None:
        """A queued launch read back from the journal: in the queue again, with what starts it."""
        held = self.books.runtimes.keep(runtime) if runtime is not None else None
        self.waiting[record.agent_id] = Waiting(spec, held, lane, output_file)
        self.books.specs[record.agent_id] = spec
        self.books.core.queue.add(record)
        self.books.core.settle(record)

    def resume_queue(self) -> None:
        """Start the queued launches whose turn has come (a restarted registry's, put back in its queue)."""
        for record in self.books.core.queue.promote(self.books.core):
            self._dequeued(record)

    async def _start_queued(self, agent_id: str) -> None:
        """Start a queued agent whose turn came (its record is running, reserved); or, if it
        cannot be started or the budget failed it in the queue, deliver that end's notice."""
        waiting = self.waiting.pop(agent_id, None)
        record = self.books.core.records.get(agent_id)
        if record is None:
            return
        if record.live:
            try:
                if waiting is None:
                    raise RuntimeError("its launch was not kept")
                await self._start(agent_id, waiting.spec, waiting.runtime, False, waiting.lane, waiting.output_file)
                return
            except Exception as exc:
                failed = FinalReport(status="failed", text=f"The agent could not be started: {exc}")
                self.books.core.finish(agent_id, failed)
        if record.report is not None:
            await self.watcher.end_queued(agent_id, record.report)
