"""A served session's pool (``BorrowedPool``), without Ray: the takes of one event-loop turn go
to the service's shared pool in one call for the actors it has ready, and each of the rest
waits for its own, so a warm actor is never held back by a cold one's start."""

from __future__ import annotations

import asyncio
from typing import Any

from covey.registry.warm_pool import BorrowedPool


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
