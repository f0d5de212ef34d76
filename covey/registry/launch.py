"""A launch is one call: check, reserve, take a warm actor, start it, watch it.

``spec`` comes with its runtime, or without it and naming it by ``runtime_key``
(``NeedRuntime`` is the answer if that key is not held: ``covey.agents.travel``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, AsyncIterator, Awaitable

from covey.registry.protocols import H
from covey.agents.travel import travelling
from covey.registry.answers import Finished, LaunchAnswer, Launched, NeedRuntime, Refused, not_started
from covey.registry.payloads import Launch
from covey.agents.records import FinalReport, LaunchRequest, RunRecord
from covey.registry.state import Waiting
from covey.registry.stop import Stopping

if TYPE_CHECKING:
    from covey.agents.spec import AgentSpec
    from covey.registry.protocols import SessionRuntime


class Launching(Stopping[H]):
    async def register_main(self, agent_id: str, model: str, cwd: str, prompt: str = "",
                            output_file: str | None = None, node_id: str | None = None) -> RunRecord:
        self._start_watchdog()
        record = self.core.register_main(agent_id, model=model, cwd=cwd, prompt=prompt)
        record.output_file, record.node_id = output_file, node_id
        if self.journal is not None:
            self.journal.write("main", payload=record)
        return record

    async def reserve(self, request: LaunchRequest) -> RunRecord | Refused:
        """The record, or the refusal (refusals are answers, not crashes)."""
        self._start_watchdog()
        return self.core.admit(request)

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
        if (known := self.core.records.get(request.agent_id)) is not None:  # sent again: the registry restarted
            return Launched(record=known, actor=self.actors.get(request.agent_id) if follow else None)
        runtime: SessionRuntime | None = None
        if spec is not None and spec.runtime is not None:  # no spec: an unknown type, refused below
            runtime = self.runtimes.keep(spec.runtime)
            spec = travelling(spec)
        elif runtime_key is not None and (runtime := self.runtimes.get(runtime_key)) is None:
            return NeedRuntime()
        answer = await self.reserve(request)
        if isinstance(answer, Refused):
            return answer
        if spec is None:  # the checks refuse an unknown type; a caller that sent none anyway
            self.core.abandon(request.agent_id)
            return not_started(ValueError("no agent spec was sent"))
        if answer.queued:
            answer.output_file = output_file
            self.waiting[request.agent_id] = Waiting(spec, runtime, lane, output_file)
            self._keep_spec(request.agent_id, spec, runtime)  # a kill before its start cleans its worktree
            if self.journal is not None:  # before it is answered: a restarted registry starts it still
                self.journal.queued(answer, spec, runtime, lane, output_file)
            return Launched(record=answer)
        try:
            actor = await self._start(request.agent_id, spec, runtime, follow, lane, output_file)
        except Exception as exc:
            self.core.abandon(request.agent_id)
            return not_started(exc)
        return Launched(record=answer, actor=actor if follow else None)

    async def _start(self, agent_id: str, spec: AgentSpec, runtime: SessionRuntime | None, follow: bool, lane: str,
                     output_file: str | None) -> H:
        """Take an actor for a reserved agent, start the agent on it and watch it; the actor.
        A failure kills the actor it took and raises (the caller undoes or fails the record)."""
        actor: H | None = None
        run: Awaitable[Finished] | None = None
        try:
            actor = await self.pool.take(lane)
            if self.journal is not None and (record := self.core.records.get(agent_id)) is not None:
                self.journal.runtime(runtime)
                self.journal.write("launched", agent_id=agent_id, output_file=output_file,
                                   payload=(record, spec, actor))
            ref = self.runtimes.ref(runtime)
            if follow:
                await actor.start(spec, follow=True, runtime=runtime, runtime_ref=ref)
            else:  # async: registered and answered at once (docs/subagents.md#the-call); a failed start is its notice
                run = actor.run_detached(spec, runtime=runtime, runtime_ref=ref)
        except Exception:
            if actor is not None:
                actor.kill()
            raise
        await self.track(agent_id, actor, output_file, actor.node, run=run)
        self._keep_spec(agent_id, spec, runtime)
        return actor

    def _keep_spec(self, agent_id: str, spec: AgentSpec, runtime: SessionRuntime | None) -> None:
        # Kept with its model (the runtime's, shared): a resume may come under a later runtime.
        self.specs[agent_id] = spec.model_copy(update={"model": runtime.model}) if (
            spec.model is None and runtime is not None) else spec

    # -- queued launches (docs/subagents.md#queued-spawns) ------------------------------

    def _dequeued(self, record: RunRecord) -> None:
        self._spawn(self._start_queued(record.agent_id))

    def requeue(self, record: RunRecord, spec: AgentSpec, runtime: SessionRuntime | None, lane: str,
                output_file: str | None) -> None:
        """A queued launch read back from the journal: in the queue again, with what starts it."""
        held = self.runtimes.keep(runtime) if runtime is not None else None
        self.waiting[record.agent_id] = Waiting(spec, held, lane, output_file)
        self.specs[record.agent_id] = spec
        self.core.queue.add(record)
        self.core.settle(record)

    def resume_queue(self) -> None:
        """Start the queued launches whose turn has come (a restarted registry's, put back in its queue)."""
        for record in self.core.queue.promote(self.core):
            self._dequeued(record)

    async def _start_queued(self, agent_id: str) -> None:
        """Start a queued agent whose turn came (its record is running, reserved); or, if it
        cannot be started or the budget failed it in the queue, deliver that end's notice."""
        waiting = self.waiting.pop(agent_id, None)
        record = self.core.records.get(agent_id)
        if record is None:
            return
        if record.live:
            try:
                if waiting is None:
                    raise RuntimeError("its launch was not kept")
                await self._start(agent_id, waiting.spec, waiting.runtime, False, waiting.lane, waiting.output_file)
                return
            except Exception as exc:
                self.core.finish(agent_id, FinalReport(status="failed", text=f"The agent could not be started: {exc}"))
        if record.report is not None:
            await self._ended_journaled(agent_id, record.report)

    async def launch_many(self, launches: list[Launch]) -> AsyncIterator[tuple[int, LaunchAnswer]]:
        """Several launches in one call (the Agent calls of one assistant message), each
        answered as ``launch`` answers it, as ``(index, answer)`` the moment it is ready: a
        launch that gets a warm actor does not wait for one whose actor is still being
        created (its sync parent could not follow it, nor the actor be recycled). Their
        checks run in the order given: each reserves before the next one is checked (a
        task runs up to its first wait when it starts, and they start in order)."""
        async def one(index: int, launch: Launch) -> tuple[int, LaunchAnswer]:
            try:
                return index, await self.launch(launch.request, launch.spec, launch.follow, launch.lane,
                                                launch.output_file, launch.runtime_key)
            except Exception as exc:
                return index, not_started(exc)

        for answered in asyncio.as_completed([asyncio.ensure_future(one(i, a)) for i, a in enumerate(launches)]):
            yield await answered
