"""The registry as a Ray actor: ``Supervisor`` itself, built with its real collaborators.

``_RegistryActor`` is the supervisor (every call it answers is the supervisor's own
method, typed there) plus what only the actor does: build the session's warm pool of
agent actors, or borrow from the covey service's shared pool, and serve one session
after another as a service's kit (``recycle``). ``RegistryHandle``
(``covey.actors.registry_handle``) is the one place that calls it.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import ray

from covey.actors.base import RayActor, RayActorClass, actor_class
from covey.actors.handle import AgentHandle
from covey.actors.mailbox import MailboxHandle
from covey.actors.agent_factory import AgentFactory
from covey.actors.pool import BorrowedPool, WarmPool, session_floors
from covey.registry.protocols import Lender, Pool
from covey.actors.registry_handle import RegistryHandle
from covey.limits import Limits
from covey.registry.supervisor import Supervisor

__all__ = ["RegistryHandle", "registry_actor_class"]
"""``RegistryHandle`` is defined in ``covey.actors.registry_handle``; importers of it from here keep working."""


class _RegistryActor(Supervisor[AgentHandle]):
    """The supervisor as a Ray actor: its pool is the session's own, or borrowed."""

    def __init__(
        self, limits: Limits, mailbox: MailboxHandle, session_id: str = "", pool_sizes: dict[str, int] | None = None,
        home_node_id: str | None = None, preload: tuple[str, ...] = (), lender: Lender | None = None,
    ) -> None:
        """``lender``: the covey service's shared pool, which this session borrows agent
        actors from (None: the session owns a warm pool of its own)."""
        self.session_id, self.lender, self.mailbox_handle = session_id, lender, mailbox
        pool: Pool[AgentHandle]
        if lender is not None:
            pool = BorrowedPool(lender, session_id)
        else:
            peers: tuple[RayActor, ...] = (ray.get_runtime_context().current_actor, mailbox)
            factory = AgentFactory(session_id, home_node_id, preload=preload, peers=peers)
            warm = WarmPool(factory.create, pool_sizes or {}, floors=session_floors(pool_sizes or {}))
            for lane in pool_sizes or {}:
                warm.fill(lane)
            pool = warm
        super().__init__(limits, pool=pool, mailbox=mailbox, put=ray.put)
        self.core.cpus = cluster_cpus()

    async def configure(self, limits: Limits) -> None:
        """A ready-made registry (a service's session kit) takes its session's limits, and
        counts the cluster's CPUs afresh (nodes may have joined since)."""
        self.core.limits, self.core.cpus = limits, cluster_cpus()

    async def recycle(self, session_id: str) -> None:
        """Serve another session (a covey service's kit, once its session ended and every
        agent of it was given back or killed): a fresh supervisor, no record of the last."""
        if self.lender is None:
            raise RuntimeError("only a registry that borrows its agents (a service's kit) serves another session")
        await self.close()
        Supervisor.__init__(self, Limits(), pool=BorrowedPool(self.lender, session_id), mailbox=self.mailbox_handle,
                            put=ray.put)
        self.core.cpus = cluster_cpus()
        self.session_id = session_id

    async def session(self) -> tuple[str, MailboxHandle]:
        """The session this registry serves now, and its mailbox (``covey ps``, ``covey team``)."""
        return self.session_id, self.mailbox_handle

    async def release(self, actor: AgentHandle) -> bool:
        """Give ``actor`` back to the pool once its run is over (a served session's main agent)."""
        return await self.pool.give_back(actor)

    async def sentinel(self) -> None:
        """Never answers: the session learns of this actor's death by the call failing."""
        await asyncio.Event().wait()


def cluster_cpus() -> int:
    """The CPUs Ray counts in the cluster (the share of background agents at work scales with
    them: ``Limits.active_limit``); this machine's if Ray counts none."""
    resources: Any = ray.cluster_resources  # untyped in Ray's stubs
    return int(resources().get("CPU", 0)) or os.cpu_count() or 1


def registry_actor_class(**options: object) -> RayActorClass:
    return actor_class(_RegistryActor, **options)
