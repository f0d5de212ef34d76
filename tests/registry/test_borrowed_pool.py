"""A served session's pool (``BorrowedPool``), without Ray: the takes of one event-loop turn go
to the service's shared pool in one call for the actors it has ready, and each of the rest
waits for its own, so a warm actor is never held back by a cold one's start."""

from __future__ import annotations

import asyncio
from typing import Any

from covey.registry.borrowed_pool import BorrowedPool


class FakeLender:
    def __init__(self, ready: int) -> None:
        self.ready = [f"warm-{i}" for i in range(ready)]
        self.calls: list[tuple[str, int]] = []
        self.cold: asyncio.Event = asyncio.Event()
        """Set: the cold starts are done."""
        self.given_back: list[Any] = []
        self.fail_batches = False
        self._made = 0

    async def take_ready(self, lane: str, session_id: str, n: int) -> list[Any]:
        self.calls.append(("take_ready", n))
        if self.fail_batches:
            raise RuntimeError("the service is busy")
        lent, self.ready = self.ready[:n], self.ready[n:]
        return lent

    async def take(self, lane: str, session_id: str) -> Any:
        self.calls.append(("take", 1))
        if self.ready:
            return self.ready.pop(0)
        await self.cold.wait()
        self._made += 1
        return f"cold-{self._made}"

    async def give_back(self, actor: Any, clean: bool) -> bool:
        self.given_back.append(actor)
        return True

    async def warm(self, n: int, lane: str = "home") -> int:
        return 0


async def test_one_call_lends_the_ready_ones_and_warm_takers_do_not_wait_for_cold_starts():
    lender = FakeLender(ready=3)
    pool = BorrowedPool(lender, "s1")  # type: ignore[arg-type]
    takes = [asyncio.ensure_future(pool.take()) for _ in range(5)]
    await asyncio.sleep(0.01)
    assert [t.result() for t in takes[:3]] == ["warm-0", "warm-1", "warm-2"]  # before any cold start ends
    assert not any(t.done() for t in takes[3:])
    lender.cold.set()
    assert sorted(await asyncio.gather(*takes[3:])) == ["cold-1", "cold-2"]
    assert lender.calls == [("take_ready", 5), ("take", 1), ("take", 1)] and pool.lent == 5


async def test_a_lone_take_asks_once():
    lender = FakeLender(ready=1)
    pool = BorrowedPool(lender, "s1")  # type: ignore[arg-type]
    assert await pool.take() == "warm-0" and lender.calls == [("take", 1)]


async def test_a_failed_batch_leaves_each_take_to_ask_on_its_own():
    lender = FakeLender(ready=2)
    lender.fail_batches = True
    pool = BorrowedPool(lender, "s1")  # type: ignore[arg-type]
    assert sorted(await asyncio.gather(pool.take(), pool.take())) == ["warm-0", "warm-1"]


async def test_an_actor_that_comes_for_a_cancelled_take_goes_back():
    lender = FakeLender(ready=0)
    pool = BorrowedPool(lender, "s1")  # type: ignore[arg-type]
    takes = [asyncio.ensure_future(pool.take()) for _ in range(2)]
    await asyncio.sleep(0.01)
    takes[0].cancel()
    lender.cold.set()
    assert await takes[1] in ("cold-1", "cold-2")
    await asyncio.sleep(0.01)
    assert len(lender.given_back) == 1 and lender.given_back[0] != takes[1].result()


class OwnActor:
    def __init__(self) -> None:
        self.killed = self.reset_first = False

    async def reset(self) -> bool:
        self.reset_first = not self.killed
        return True

    def kill(self) -> None:
        self.killed = True


async def test_an_agent_that_asks_for_resources_gets_an_actor_made_here_and_killed_when_given_back():
    from covey.ray.resources import AgentResources

    lane = AgentResources.model_validate({"num_gpus": 1}).lane()
    made: list[OwnActor] = []
    held = asyncio.Event()

    async def create(asked: str) -> OwnActor:
        assert asked == lane
        await held.wait()  # Ray holds it until a node has a GPU
        made.append(OwnActor())
        return made[-1]

    lender = FakeLender(ready=2)
    pool = BorrowedPool(lender, "s1", create)  # type: ignore[arg-type]
    take = asyncio.ensure_future(pool.take(lane))
    await asyncio.sleep(0.01)
    take.cancel()  # a kill while Ray holds it reaches the create, which kills the pending actor
    await asyncio.sleep(0.01)
    assert take.cancelled() and made == [] and lender.calls == []
    held.set()
    actor = await pool.take(lane)
    assert actor is made[0] and lender.calls == []  # the service's pool is never asked for it
    assert await pool.give_back(actor) is False
    assert actor.killed and actor.reset_first and lender.given_back == []  # its GPU goes back to Ray
