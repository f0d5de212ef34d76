"""``_AgentActor``: an ``AgentRunner`` (``covey.agent.runner``) as a Ray actor.

The actor *is* the runner: every call it answers is the runner's own method, declared
there once. The actor adds what only an actor has: its warm-up before it is pooled, the
session runtime it keeps between runs, and its process's identity (node, pid, loaded
modules). ``AgentHandle`` (``covey.agent.handle``) is the only code that calls it.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, cast

import ray
from ray.actor import ActorClass

from covey.agent.runner import AgentRunner
from covey.agent.warmup import warm_up
from covey.ray.handle import actor_class
from covey.runtime.answers import Finished
from covey.runtime.ports import SessionRuntime
from covey.runtime.spec import AgentSpec
from covey.runtime.travel import arrived

if TYPE_CHECKING:
    from covey.runtime.ports import Runtime

__all__ = ["AgentRunner", "agent_actor_class"]


class _AgentActor(AgentRunner):
    """The runner, plus the session runtime it keeps and its process's identity."""

    def __init__(self, preload: tuple[str, ...] = (), peers: tuple[Any, ...] = ()) -> None:
        # A pooled actor is made ready before anyone waits on it: covey's modules and
        # tool schemas loaded, the session's actor handles (``peers``: registry,
        # mailbox) already unpickled once, so their classes are known here.
        warm_up(preload)
        self._peers = peers
        self._runtime: SessionRuntime | None = None
        super().__init__()

    async def start(self, spec: AgentSpec, follow: bool = False, runtime: Runtime = None,
                    runtime_key: str | None = None) -> str:
        """Start ``spec``; its session runtime comes with it, or is the one this actor
        was sent before under ``runtime_key`` (it keeps the last one)."""
        return await super().start(self._arrived(spec, runtime, runtime_key), follow=follow)

    async def run_detached(self, spec: AgentSpec, runtime: Runtime = None, runtime_key: str | None = None,
                           ) -> Finished:
        """Start ``spec`` unfollowed and answer at its end: ``finish``'s report and reset."""
        await super().start(self._arrived(spec, runtime, runtime_key))
        return await self.finish()

    def _arrived(self, spec: AgentSpec, sent: Runtime, runtime_key: str | None) -> AgentSpec:
        runtime = cast("SessionRuntime | None", sent)  # Ray hands the actor the value of an object ref
        if runtime is not None:
            self._runtime = runtime
        elif runtime_key is not None:
            if self._runtime is None or self._runtime.key != runtime_key:
                raise RuntimeError(f"this agent actor does not hold session runtime {runtime_key}")
            runtime = self._runtime
        return arrived(spec, runtime)

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
