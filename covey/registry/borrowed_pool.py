"""A served session's pool: ``BorrowedPool`` borrows agent actors from the covey service's shared pool.

What ``WarmPool`` (``covey/registry/warm_pool.py``) does for a session's own registry, this does
for a kit's registry: the takes of one event-loop turn go to the lender in one call; an agent that
asks for resources gets an actor made here instead (``create``), killed when given back.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from covey.agent.handle import AgentHandle
from covey.errors import AgentUnavailable
from covey.ray.resources import resources_of
from covey.runtime.payloads import BorrowedPoolStats
from covey.runtime.ports import Lender


class BorrowedPool:
    """A served session's pool: what ``WarmPool`` does for the supervisor, by borrowing
    from the covey service's shared pool (``lender``: its handle) instead of owning actors.

    A given-back actor is reset here first (the reset waits until the run's follower has
    its report) and then returned to the lender, which keeps or kills it.
    """

    def __init__(self, lender: Lender[AgentHandle], session_id: str,
                 create: Callable[[str], Awaitable[AgentHandle]] | None = None) -> None:
        self.lender, self.session_id, self.create = lender, session_id, create
        self.own: set[AgentHandle] = set()
        """Actors made here for agents that ask for resources (``create``): killed when given back,
        and a cancelled take kills the one Ray still holds, which a borrowed take could not."""
        self.lent = 0
        self.returned = 0
        self._asking: dict[str, list[asyncio.Future[AgentHandle]]] = {}
        """The takes of this event-loop turn by lane, asked of the lender together."""

    async def take(self, lane: str = "home") -> AgentHandle:
        """An agent actor. The takes of one turn (the launches of one message) go to the lender
        in one call for those it has ready; each of the rest waits for its own, so a warm
        actor never waits for a cold one's start."""
        if self.create is not None and resources_of(lane) is not None:
            actor = await self.create(lane)
            self.own.add(actor)
            return actor
        asking = self._asking.setdefault(lane, [])
        wanted: asyncio.Future[AgentHandle] = asyncio.get_running_loop().create_future()
        asking.append(wanted)
        if len(asking) == 1:
            asyncio.get_running_loop().call_soon(lambda: _spawned(self._ask(lane, self._asking.pop(lane))))
        actor = await wanted
        self.lent += 1
        return actor

    async def _ask(self, lane: str, wanted: list[asyncio.Future[AgentHandle]]) -> None:
        try:
            ready = await self.lender.take_ready(lane, self.session_id, len(wanted)) if len(wanted) > 1 else []
        except Exception:  # noqa: BLE001 - each take then asks on its own, and fails on its own
            ready = []
        for future, actor in zip(wanted, ready):
            self._hand(future, actor)
        await asyncio.gather(*(self._one(lane, future) for future in wanted[len(ready):]))

    async def _one(self, lane: str, future: asyncio.Future[AgentHandle]) -> None:
        try:
            self._hand(future, await self.lender.take(lane, self.session_id))
        except Exception as exc:
            if not future.done():
                future.set_exception(exc)

    def _hand(self, future: asyncio.Future[AgentHandle], actor: AgentHandle) -> None:
        if future.done():  # its launch was cancelled meanwhile: the actor goes back
            _spawned(self.lender.give_back(actor, True))
        else:
            future.set_result(actor)

    async def give_back(self, actor: AgentHandle, clean: bool | None = None) -> bool:
        if clean is None:
            clean = await actor.reset()
        if actor in self.own:  # what it holds goes back to Ray
            self.own.discard(actor)
            actor.kill()
            return False
        self.returned += 1
        try:
            return await self.lender.give_back(actor, clean)
        except AgentUnavailable:  # the service is going: nothing will reuse the actor
            actor.kill()
            return False

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self.lender.warm(n, lane)

    def stats(self) -> BorrowedPoolStats:
        return {"shared": True, "lent": self.lent, "returned": self.returned}


_TASKS: set[asyncio.Task[Any]] = set()


def _spawned(work: Any) -> None:
    """Run ``work`` to its end in the background (a reference is kept until then)."""
    task = asyncio.ensure_future(work)
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)
