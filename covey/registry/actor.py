"""The registry as a Ray actor: ``Supervisor`` itself, built with its real collaborators.

``_RegistryActor`` is the supervisor (every call it answers is the supervisor's own
method, typed there) plus what only the actor does: build the session's warm pool of
agent actors, or borrow from the covey service's shared pool, and serve one session
after another as a service's kit (``recycle``). ``RegistryHandle``
(``covey.registry.handle``) is the one place that calls it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import ray

from covey.agent.factory import AgentFactory
from covey.agent.handle import AgentHandle
from covey.ray.handle import RayActor, RayActorClass, actor_class
from covey.registry.events import Configured
from covey.registry.journal import RegistryJournal, restore_books
from covey.registry.supervisor import Supervisor
from covey.registry.borrowed_pool import BorrowedPool
from covey.registry.warm_pool import WarmPool, session_floors
from covey.runtime.limits import Limits
from covey.runtime.ports import Lender, Pool
from covey.teams.mailbox_actor import MailboxHandle

log = logging.getLogger(__name__)


class _RegistryActor(Supervisor[AgentHandle]):
    """The supervisor as a Ray actor: its pool is the session's own, or borrowed."""

    def __init__(
        self, limits: Limits, mailbox: MailboxHandle, session_id: str = "", pool_sizes: dict[str, int] | None = None,
        home_node_id: str | None = None, preload: tuple[str, ...] = (), lender: Lender[AgentHandle] | None = None,
    ) -> None:
        """``lender``: the covey service's shared pool, which this session borrows agent
        actors from (None: the session owns a warm pool of its own)."""
        self.session_id, self.lender, self.mailbox_handle = session_id, lender, mailbox
        pool: Pool[AgentHandle]
        peers: tuple[RayActor, ...] = (ray.get_runtime_context().current_actor, mailbox)
        self.factory = AgentFactory(session_id, home_node_id, preload=preload, peers=peers)
        """Makes the session's agent actors; a borrowing registry's, those of agents that ask for resources."""
        if lender is not None:
            pool = BorrowedPool(lender, session_id, self.factory.create)
        else:
            warm = WarmPool(self.factory.create, pool_sizes or {}, floors=session_floors(pool_sizes or {}))
            for lane in pool_sizes or {}:
                warm.fill(lane)
            pool = warm
        context = ray.get_runtime_context()
        self.journal = None if lender is None else RegistryJournal.for_actor(context.get_actor_name() or session_id)
        """A kit's journal (its agents outlive it, so Ray restarts it); None: a session's own registry."""
        super().__init__(limits, pool=pool, mailbox=mailbox, put=ray.put, node_alive=node_alive, journal=self.journal)
        self.books.core.cpus = cluster_cpus()
        self._pending: tuple[list[tuple[str, Any, str | None]], list[str]] = ([], [])
        """A restarted registry's agents to watch again and notices maybe owed, taken up at its first call."""
        if lender is not None and self.journal is not None:  # a kit's: Ray restarts it, and it reads its journal
            if context.was_current_actor_reconstructed:
                self._restore(lender)
            else:
                self.journal.begin(session_id)

    def _restore(self, lender: Lender[AgentHandle]) -> None:
        assert self.journal is not None
        restored = self.journal.read()
        self.session_id = restored.session_id or self.session_id
        self.books.pool = BorrowedPool(lender, self.session_id, self.factory.create)
        self.journal.reopen()  # restoring may write: a queued launch that cannot come back ends failed
        self._pending = restore_books(self.books, self.launcher, restored)
        log.warning("registry of session %s restarted: %d agents to watch again, %d notices to check",
                    self.session_id, len(self._pending[0]), len(self._pending[1]))

    async def ping(self) -> bool:
        """Answers once this actor serves (a restarted one: once it watches its running agents again)."""
        rewatch, owed = self._pending
        self._pending = ([], [])
        for agent_id, actor, output_file in rewatch:
            await self.watcher.track(agent_id, actor, output_file, actor.node, run=actor.report_for(agent_id))
        for agent_id in owed:
            if (record := self.books.core.records.get(agent_id)) is not None and record.report is not None:
                self.books.spawn(self.watcher.ended(agent_id, record.report))
        if rewatch or owed or len(self.books.core.queue):
            self.launcher.resume_queue()  # slots its agents freed while it was down
            self.stopper.start_watchdog()
        return True

    async def configure(self, limits: Limits) -> None:
        """A ready-made registry (a service's session kit) takes its session's limits, and
        counts the cluster's CPUs afresh (nodes may have joined since)."""
        self.books.core.limits, self.books.core.cpus = limits, cluster_cpus()
        self.books.journal.record(Configured(limits))

    async def recycle(self, session_id: str) -> None:
        """Serve another session (a covey service's kit, once its session ended and every
        agent of it was given back or killed): a fresh supervisor, no record of the last."""
        if self.lender is None:
            raise RuntimeError("only a registry that borrows its agents (a service's kit) serves another session")
        await self.close()
        pool = BorrowedPool(self.lender, session_id, self.factory.create)
        Supervisor.__init__(self, Limits(), pool=pool, mailbox=self.mailbox_handle,
                            put=ray.put, node_alive=node_alive, journal=self.journal)
        self.books.core.cpus = cluster_cpus()
        self.session_id = session_id
        if self.journal is not None:
            self.journal.begin(session_id)

    async def session(self) -> tuple[str, MailboxHandle]:
        """The session this registry serves now, and its mailbox (``covey ps``, ``covey team``)."""
        return self.session_id, self.mailbox_handle

    async def release(self, actor: AgentHandle) -> bool:
        """Give ``actor`` back to the pool once its run is over (a served session's main agent)."""
        return await self.books.pool.give_back(actor)

    async def sentinel(self) -> None:
        """Never answers: the session learns of this actor's death by the call failing."""
        await asyncio.Event().wait()


def node_alive(node_id: str | None) -> bool:
    """Whether Ray counts the node alive (unknown: yes)."""
    if not node_id:
        return True
    nodes: Any = ray.nodes  # untyped in Ray's stubs
    return any(node.get("NodeID") == node_id and node.get("Alive") for node in nodes())


def cluster_cpus() -> int:
    """The CPUs Ray counts in the cluster (the share of background agents at work scales with
    them: ``Limits.active_limit``); this machine's if Ray counts none."""
    resources: Any = ray.cluster_resources  # untyped in Ray's stubs
    return int(resources().get("CPU", 0)) or os.cpu_count() or 1


def registry_actor_class(**options: object) -> RayActorClass:
    return actor_class(_RegistryActor, **options)
