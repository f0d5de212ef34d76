"""The covey service's shared pool as a Ray actor, and its handle.

One actor per service lends every session it serves what it needs on its way to the
first model request, already running: agent actors (lanes "home" and "any") and a
*kit* (lane "kit"): a registry and a mailbox actor made for a session id of their own,
the registry borrowing its agents from this pool. The rules (what to keep, what to
start, how demand decays) are ``DemandPool``'s; this module adapts them to Ray.

The pool owns what it creates, so agents and kits outlive the sessions that borrow
them; a session that ends (or whose client went away) is ended here, which kills
whatever it still held. Its kit serves the next session (a fresh supervisor, an empty
mailbox, a new session id) unless the session had teams or lost one of the kit's actors.
"""

from __future__ import annotations

import asyncio
import getpass
import hashlib
import os
import socket
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Hashable

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from covey.agent.factory import AgentFactory
from covey.agent.handle import AgentHandle
from covey.ids import new_session_id
from covey.pool.demand import DEFAULT_HALF_LIFE_S, DemandPool, SharedPoolStats
from covey.ray.handle import RayActor, RayActorClass, TypedHandle, actor_class
from covey.ray.local import NAMESPACE
from covey.registry.actor import registry_actor_class
from covey.registry.handle import RegistryHandle
from covey.registry.warm_pool import default_pool_floor
from covey.runtime.limits import Limits
from covey.teams.mailbox_actor import MailboxHandle, mailbox_actor_class

POOL_TICK_S = 5.0
"""How often idle lanes' demand decays and floors are refilled (cheap: no Ray call unless
something must start or go)."""
KIT_LANE = "kit"
KIT_NAME_PREFIX = "covey:kit-"
"""A kit's actors are ``covey:kit-<id>:registry`` and ``...:mailbox``: they serve one session after another."""


def pool_name(service_dir: str) -> str:
    """The shared pool of the covey service whose directory is ``service_dir``: one per user,
    machine and service directory, so two services of one user on one Ray (two
    ``COVEY_SERVICE_DIR``s joined to one cluster) never lend from, or stop, each other's."""
    digest = hashlib.sha256(service_dir.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"covey:pool:{getpass.getuser()}@{socket.gethostname()}:{digest}"


def default_half_life_s() -> float:
    """How fast idle demand decays: ``COVEY_POOL_HALF_LIFE_S`` (default 300 s)."""
    return float(os.environ.get("COVEY_POOL_HALF_LIFE_S") or DEFAULT_HALF_LIFE_S)


def default_floors() -> dict[str, int]:
    """Ready when idle: ``COVEY_POOL_FLOOR`` agent actors (default 2: a main agent and one
    child) and one session kit."""
    return {KIT_LANE: 1, "home": default_pool_floor()}


@dataclass
class SessionKit:
    """A session's registry and mailbox actors, made before the session asked."""

    session_id: str
    registry: RayActor
    mailbox: RayActor
    names: tuple[str, str] = ("", "")
    """The registry's and the mailbox's actor names."""

    def handles(self) -> tuple[RegistryHandle, MailboxHandle]:
        return RegistryHandle(self.registry, self.names[0]), MailboxHandle(self.mailbox, self.names[1])

    def kill(self) -> None:
        for handle in self.handles():
            handle.kill()


Lent = AgentHandle | SessionKit
"""What the shared pool lends: agent actors ("home", "any") and session kits ("kit")."""


def _key(item: Lent) -> Hashable:
    """An item's actor id (a kit's: its registry's): what survives the item's trips."""
    return str((item.registry if isinstance(item, SessionKit) else item.actor)._actor_id.hex())


def _owner(item: Lent) -> str:
    """The session a kit serves; an agent is always lent to a named session."""
    return item.session_id if isinstance(item, SessionKit) else ""


class _SharedPoolActor:
    """Ray shell over ``DemandPool``: creates agent actors and kits, lends and takes them back."""

    def __init__(
        self, home_node_id: str | None, floors: dict[str, int] | None = None, preload: tuple[str, ...] = (),
        half_life_s: float | None = None,
    ) -> None:
        self.home = home_node_id
        self.factory = AgentFactory(f"svc-{secrets.token_hex(2)}", home_node_id, preload=preload)
        self.pool: DemandPool[Lent] = DemandPool(
            self._create, floors if floors is not None else default_floors(), key=_key, owner=_owner,
            half_life_s=half_life_s or default_half_life_s())
        self._ticker: asyncio.Task[None] | None = None

    async def ready(self) -> SharedPoolStats:
        """Start the floors and the tick; the stats once every floor is ready."""
        if self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())
        # What a first run waits for (a kit and its main agent) first, then the rest: on a
        # cold machine the processes would otherwise share the CPU the first run needs.
        first = {lane: min(floor, 1) for lane, floor in self.pool.floors.items()}
        for floors in (first, self.pool.floors):
            await asyncio.gather(*(self.pool.warm(floor, lane) for lane, floor in floors.items()))
        return self.pool.stats()

    async def take(self, lane: str, session_id: str) -> AgentHandle:
        item = await self.pool.take(lane, session_id)
        if not isinstance(item, AgentHandle):
            raise ValueError(f"lane {lane!r} lends session kits, not agents: take_kit")
        return item

    async def take_ready(self, lane: str, session_id: str, n: int) -> list[AgentHandle]:
        """Up to ``n`` agents ready now, in one call (the launches of one message)."""
        if lane == KIT_LANE:
            raise ValueError(f"lane {lane!r} lends session kits, not agents: take_kit")
        return [item for item in self.pool.take_ready(lane, n, session_id) if isinstance(item, AgentHandle)]

    async def take_kit(self, preload: tuple[str, ...] = (), session_id: str | None = None) -> SessionKit:
        """A ready session kit; the agent actors started from now on also preload ``preload``.
        ``session_id``: the kit serves that session (a resumed one) instead of the id it has."""
        if missing := tuple(m for m in preload if m not in self.factory.preload):
            self.factory.preload = (*self.factory.preload, *missing)
        kit = await self.pool.take(KIT_LANE, session_id)
        if not isinstance(kit, SessionKit):
            raise TypeError(f"the {KIT_LANE!r} lane lent something that is not a kit")
        if session_id is None:
            return kit
        await kit.handles()[0].recycle(session_id)
        kit.session_id = session_id
        return kit

    async def give_back(self, actor: AgentHandle, clean: bool) -> bool:
        return self.pool.give_back(actor, clean)

    async def end_session(self, session_id: str, reuse_kit: bool = False) -> None:
        """Kill what the session still holds; its kit is made ready for another session
        (``reuse_kit``: the session ended with its actors alive and no team), else killed."""
        for kit in self.pool.end_session(session_id, spare=(KIT_LANE,)):
            self.pool.give_back(kit, reuse_kit and isinstance(kit, SessionKit) and await self._recycled(kit))
        self.pool.tick()  # a killed kit or agent is replaced up to the floors

    async def _recycled(self, kit: SessionKit) -> bool:
        session_id = new_session_id()
        registry, mailbox = kit.handles()
        try:
            await asyncio.gather(registry.recycle(session_id), mailbox.reset())
        except Exception:  # a kit that cannot be made ready again is killed
            return False
        kit.session_id = session_id
        return True

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self.pool.warm(n, lane)

    async def stats(self) -> SharedPoolStats:
        return self.pool.stats()

    async def shutdown(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        await self.pool.shutdown()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(POOL_TICK_S)
            self.pool.tick()

    async def _create(self, lane: str) -> Lent:
        if lane == KIT_LANE:
            return await self._new_kit()
        return await self.factory.create(lane)

    async def _new_kit(self) -> SessionKit:
        """A registry and a mailbox, named by the kit (they serve one session after another)."""
        session_id = new_session_id()
        prefix = f"{KIT_NAME_PREFIX}{secrets.token_hex(3)}"
        options: dict[str, object] = {"namespace": NAMESPACE}
        if self.home:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(self.home, soft=False)
        names = (f"{prefix}:registry", f"{prefix}:mailbox")
        mailbox = mailbox_actor_class().options(name=names[1], **options).remote()
        me = SharedPoolHandle(ray.get_runtime_context().current_actor, "pool")
        # Restartable: the kit's agents are this pool's, so they outlive their registry, which comes
        # back from its journal (covey.registry.journal) and watches them again.
        registry = registry_actor_class(max_restarts=-1).options(name=names[0], **options).remote(
            Limits(), MailboxHandle(mailbox, "mailbox"), session_id, {}, self.home, (), lender=me,
        )
        await asyncio.gather(mailbox.__ray_ready__.remote(), registry.__ray_ready__.remote())
        return SessionKit(session_id, registry, mailbox, names)


def shared_pool_class(**options: object) -> RayActorClass:
    return actor_class(_SharedPoolActor, **options)


class SharedPoolHandle(TypedHandle[_SharedPoolActor]):
    """The one place that calls the shared pool actor (the service, sessions, registries)."""

    @classmethod
    def create(cls, name: str, home_node_id: str | None, *, lifetime: str | None = None,
               **options: object) -> "SharedPoolHandle":
        """``lifetime="detached"``: the pool (and the kits and agents it made) outlive this driver."""
        actor = shared_pool_class().options(name=name, namespace=NAMESPACE, lifetime=lifetime).remote(
            home_node_id, **options)
        return cls(actor, name)

    @classmethod
    def named(cls, name: str) -> "SharedPoolHandle":
        return cls(ray.get_actor(name, namespace=NAMESPACE), name)

    async def ready(self) -> SharedPoolStats:
        return await self._call(self.remote.ready)

    async def take(self, lane: str, session_id: str) -> AgentHandle:
        return await self._call(self.remote.take, lane, session_id)

    async def take_ready(self, lane: str, session_id: str, n: int) -> list[AgentHandle]:
        return await self._call(self.remote.take_ready, lane, session_id, n)

    async def take_kit(self, preload: tuple[str, ...] = (), session_id: str | None = None) -> SessionKit:
        return await self._call(self.remote.take_kit, preload, session_id)

    async def give_back(self, actor: AgentHandle, clean: bool) -> bool:
        return await self._call(self.remote.give_back, actor, clean)

    def end_session(self, session_id: str, reuse_kit: bool = False) -> None:
        self._tell(self.remote.end_session, session_id, reuse_kit)

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self._call(self.remote.warm, n, lane)

    async def stats(self) -> SharedPoolStats:
        return await self._call(self.remote.stats)

    async def shutdown(self) -> None:
        await self._call(self.remote.shutdown)


if TYPE_CHECKING:
    from covey.runtime.ports import Lender

    _: type[Lender[AgentHandle]] = SharedPoolHandle  # the type checker holds the handle to the port here
