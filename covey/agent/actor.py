"""``_AgentActor``: the Ray shell over an ``AgentRunner`` (``covey.agent.runner``).

Each method forwards to the runner; the shell adds what only an actor has: its warm-up
before it is pooled, the session runtime it keeps between runs, and its process's
identity (node, pid, loaded modules). ``AgentHandle`` (``covey.agent.handle``) is the
only code that calls it.
"""

from __future__ import annotations

import os
import sys
from typing import Any, AsyncIterator

import ray
from ray.actor import ActorClass

from covey.ray.handle import actor_class
from covey.agent.runner import AgentRunner
from covey.runtime.travel import arrived
from covey.agent.warmup import warm_up
from covey.runtime.spec import AgentSpec
from covey.events import Event
from covey.runtime.answers import Finished
from covey.runtime.records import FinalReport, Status

__all__ = ["AgentRunner", "agent_actor_class"]


class _AgentActor:
    """Ray shell: each method forwards to the runner."""

    def __init__(self, preload: tuple[str, ...] = (), peers: tuple[Any, ...] = ()) -> None:
        # A pooled actor is made ready before anyone waits on it: covey's modules and
        # tool schemas loaded, the session's actor handles (``peers``: registry,
        # mailbox) already unpickled once, so their classes are known here.
        warm_up(preload)
        self._peers = peers
        self._runtime: Any = None
        self.runner = AgentRunner()

    async def start(self, spec: AgentSpec, follow: bool = False, runtime: Any = None, runtime_key: str | None = None) -> str:
        """Start ``spec``; its session runtime comes with it, or is the one this actor
        was sent before under ``runtime_key`` (it keeps the last one)."""
        return await self.runner.start(self._arrived(spec, runtime, runtime_key), follow=follow)

    async def run_detached(self, spec: AgentSpec, runtime: Any = None, runtime_key: str | None = None,
                           ) -> Finished:
        """Start ``spec`` unfollowed and answer at its end: ``finish``'s report and reset."""
        await self.runner.start(self._arrived(spec, runtime, runtime_key))
        return await self.runner.finish()

    def _arrived(self, spec: AgentSpec, runtime: Any, runtime_key: str | None) -> AgentSpec:
        if runtime is not None:
            self._runtime = runtime
        elif runtime_key is not None:
            if self._runtime is None or self._runtime.key != runtime_key:
                raise RuntimeError(f"this agent actor does not hold session runtime {runtime_key}")
            runtime = self._runtime
        spec_here: AgentSpec = arrived(spec, runtime)
        return spec_here

    async def follow(self) -> AsyncIterator[list[Event | FinalReport]]:
        async for batch in self.runner.follow_batches():
            yield batch

    async def run(self, spec: AgentSpec) -> AsyncIterator[Event]:
        async for event in self.runner.run(spec):
            yield event

    async def wait(self) -> FinalReport:
        return await self.runner.wait()

    async def finish(self) -> Finished:
        return await self.runner.finish()

    async def report_for(self, agent_id: str) -> Finished:
        return await self.runner.report_for(agent_id)

    async def detach(self) -> None:
        await self.runner.detach()

    async def received(self, agent_id: str) -> None:
        await self.runner.received(agent_id)

    async def cancel(self, status: Status = "killed", reason: str = "", agent_id: str | None = None) -> bool:
        return await self.runner.cancel(status, reason, agent_id)

    async def ask(self, request: Any) -> Any:
        return await self.runner.ask(request)

    async def relay(self, event: Event) -> bool:
        return self.runner.relay(event)

    async def answer(self, request_id: str, answer: Any) -> bool:
        return await self.runner.answer(request_id, answer)

    async def reset(self) -> bool:
        return await self.runner.reset()

    async def ping(self) -> str:
        node: str = ray.get_runtime_context().get_node_id()
        return node

    async def pid(self) -> int:
        """This actor's process id on its node (to signal or inspect it from outside)."""
        return os.getpid()

    async def loaded_modules(self) -> list[str]:
        """The modules this process has imported (tests check a run adds none)."""
        return sorted(sys.modules)


def agent_actor_class(**options: Any) -> ActorClass[_AgentActor]:
    """The Ray actor class; agents wait on the model, so they reserve no CPU.

    Ray's task events are off for its methods, except ``start``, whose task
    name says which agent the actor serves (``AgentHandle.start``): the chatty
    calls (progress, waits, resets) cost every process and the GCS CPU that a
    fan-out of a hundred children needs (docs/benchmarks.md).
    """
    cls: ActorClass[_AgentActor] = actor_class(_AgentActor, max_concurrency=1000, **options)
    return cls
