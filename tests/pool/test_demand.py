"""The shared pool's rules (``DemandPool``), driven with fake items and a fake clock."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from covey.pool.demand import DemandPool


class Item:
    ids = itertools.count(1)

    def __init__(self, lane: str) -> None:
        self.n, self.lane, self.killed = next(self.ids), lane, False
        self.session_id = f"kit-{self.n}"

    def kill(self) -> None:
        self.killed = True


class Maker:
    """Creates items; ``gate`` (if set) holds every creation until it is set."""

    def __init__(self) -> None:
        self.made: list[Item] = []
        self.gate: asyncio.Event | None = None
        self.fail = False

    async def __call__(self, lane: str) -> Item:
        if self.gate is not None:
            await self.gate.wait()
        await asyncio.sleep(0)
        if self.fail:
            raise RuntimeError("no node")
        item = Item(lane)
        self.made.append(item)
        return item


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def pool(maker: Maker, clock: Clock | None = None, floor: int = 0, **kw) -> DemandPool:
    return DemandPool(maker, {"home": floor}, clock=clock or Clock(), half_life_s=100, **kw)


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_a_burst_bigger_than_the_ready_items_starts_the_missing_ones_as_fast_as_the_machine_can():
    maker = Maker()
    p = pool(maker, floor=2, parallel_starts=2)
    await p.warm(2)
    assert len(maker.made) == 2
    maker.gate = asyncio.Event()
    takes = [asyncio.ensure_future(p.take("home", "s1")) for _ in range(5)]
    await settle()
    assert p.starting["home"] == 2  # two were ready; three wait, two starts at a time
    maker.gate.set()
    got = await asyncio.gather(*takes)
    assert len({item.n for item in got}) == 5 and len(maker.made) == 5
    assert p.high_water["home"] == 5 and p.stats()["home"]["loans"] == 5


async def test_take_ready_lends_only_what_is_ready_and_counts_each_loan():
    maker = Maker()
    p = pool(maker, floor=3)
    await p.warm(3)
    lent = p.take_ready("home", 5, "s1")
    assert len(lent) == 3 and not p.ready["home"] and len(maker.made) == 3  # nothing started for the rest
    assert p.in_use("home") == 3 and p.stats()["home"]["loans"] == 3
    assert all(p.give_back(item, True) for item in lent)


async def test_ramping_up_to_demand_waits_until_nothing_is_lent():
    clock, maker = Clock(), Maker()
    p = pool(maker, clock, floor=1, parallel_starts=8)
    p.demand["home"] = 4.0
    held = await p.take("home", "s")
    p.tick()
    await settle()
    assert len(p.ready["home"]) == 0  # a session runs: no process started beside it
    p.give_back(held, clean=True)
    p.tick()
    await settle()
    assert len(p.ready["home"]) == 4


async def test_a_run_served_by_give_backs_keeps_starting_one_at_a_time_to_what_it_asked_for():
    maker = Maker()
    p = pool(maker, floor=1, parallel_starts=2)
    await p.warm(1)
    maker.gate = asyncio.Event()
    first = await p.take("home", "s")
    takers = [asyncio.ensure_future(p.take("home", "s")) for _ in range(3)]  # four asked at once
    await settle()
    assert p.starting["home"] == 2
    p.give_back(first, clean=True)  # serves the oldest taker before any start ends
    await settle()
    p.give_back(takers[0].result(), clean=True)
    await settle()
    assert len(p.waiting["home"]) == 1 and p.starting["home"] == 2
    maker.gate.set()
    await settle()
    await asyncio.gather(*takers[1:])
    # one start served the last taker; nobody waits, yet the lane keeps starting, one at a time,
    # until it holds the four the run asked for, so the same run right after finds them ready
    assert p.starting["home"] <= 1
    for _ in range(3):
        await settle()
    assert len(maker.made) == 4 and p._held("home") == 4 and p.starting["home"] == 0
    p.tick()
    await settle()
    assert len(maker.made) == 4  # never past what was asked while the run holds items


async def test_a_size_seen_once_finds_its_items_ready_the_second_time():
    maker = Maker()
    p = pool(maker, floor=1)
    first = [await p.take("home", "s1") for _ in range(4)]
    for item in first:
        assert p.give_back(item, clean=True)
    assert len(p.ready["home"]) == 4
    second = [await p.take("home", "s2") for _ in range(4)]
    assert {i.n for i in second} == {i.n for i in first}
    assert len(maker.made) == 4  # nothing new started


async def test_demand_counts_what_a_burst_asked_for_not_what_cold_starts_let_run_at_once():
    """Sync children that finish before the last cold actor is up never hold all their
    actors at once; the next run of that size must still find one for each."""
    maker = Maker()
    p = pool(maker)
    maker.gate = asyncio.Event()
    takes = [asyncio.ensure_future(p.take("home", "s")) for _ in range(6)]
    await settle()
    assert p.target("home") == 6
    maker.gate.set()
    first = await takes[0]
    p.give_back(first, clean=True)  # one child done before the others started
    rest = await asyncio.gather(*takes[1:])
    for item in rest:
        p.give_back(item, clean=True)
    p.tick()  # idle now: the lane is filled up to what was asked for
    await settle()
    assert len(p.ready["home"]) == 6


async def test_a_waiting_taker_gets_an_item_given_back_before_its_own_start_ends():
    maker = Maker()
    p = pool(maker)
    held = await p.take("home", "s1")
    maker.gate = asyncio.Event()
    waiting = asyncio.ensure_future(p.take("home", "s1"))
    await settle()
    assert p.give_back(held, clean=True)
    assert await waiting is held
    maker.gate.set()
    await settle()
    assert len(p.ready["home"]) == 1  # the late start is ready for the next taker


async def test_unclean_or_worn_out_items_are_killed_not_kept():
    maker = Maker()
    p = pool(maker, max_uses=2)
    item = await p.take("home", "s")
    assert not p.give_back(item, clean=False) and item.killed
    worn = await p.take("home", "s")
    assert p.give_back(worn, clean=True)
    assert await p.take("home", "s") is worn
    assert not p.give_back(worn, clean=True) and worn.killed


async def test_idle_demand_decays_by_half_lives_to_the_floor_and_lets_go_of_the_rest():
    clock, maker = Clock(), Maker()
    p = pool(maker, clock, floor=2)
    items = [await p.take("home", "s") for _ in range(8)]
    for item in items:
        p.give_back(item, clean=True)
    assert p.target("home") == 8
    clock.now += 100  # one half-life idle
    p.tick()
    assert p.target("home") == 4 and len(p.ready["home"]) == 4
    assert sum(i.killed for i in items) == 4
    clock.now += 1000
    p.tick()
    assert p.target("home") == 2 and len(p.ready["home"]) == 2


async def test_demand_does_not_decay_while_a_lane_lends_and_ticks_fill_the_floor():
    clock, maker = Clock(), Maker()
    p = pool(maker, clock, floor=3)
    items = [await p.take("home", "s") for _ in range(5)]
    p.give_back(items[0], clean=True)
    clock.now += 1000
    p.tick()
    assert p.target("home") == 5  # four still lent: demand holds
    for item in items[1:]:
        p.give_back(item, clean=True)
    clock.now += 1000
    p.tick()
    assert p.target("home") == 3


async def test_ending_a_session_kills_what_it_still_holds_only():
    maker = Maker()
    p = pool(maker)
    mine = [await p.take("home", "a") for _ in range(2)]
    theirs = await p.take("home", "b")
    assert p.end_session("a") == []
    assert all(i.killed for i in mine) and not theirs.killed
    assert p.in_use("home") == 1


async def test_a_late_give_back_from_an_ended_session_is_killed_not_kept():
    maker = Maker()
    p = pool(maker, floor=2)
    item = await p.take("home", "a")
    p.end_session("a")
    assert not p.give_back(item, clean=True) and item not in p.ready["home"]


async def test_an_ended_sessions_spared_kit_is_lent_until_given_back_then_serves_its_next_session():
    maker = Maker()
    p = DemandPool(maker, {"kit": 1}, clock=Clock(), owner=lambda item: item.session_id)
    await p.warm(1, "kit")
    kit = await p.take("kit")  # lent to the kit's own session id
    assert p.lent[id(kit)].session_id == kit.session_id
    agent = await p.take("home", kit.session_id)
    assert p.end_session(kit.session_id, spare=("kit",)) == [kit]
    assert agent.killed and not kit.killed and p.in_use("kit") == 1
    kit.session_id = "next-session"
    assert p.give_back(kit, clean=True)
    again = await p.take("kit")
    assert again is kit and p.lent[id(kit)].session_id == "next-session"
    assert [i.lane for i in maker.made].count("kit") == 1  # no kit was made for the second session


async def test_a_kit_that_could_not_be_made_ready_again_is_killed_and_the_floor_refilled():
    maker = Maker()
    p = DemandPool(maker, {"kit": 1}, clock=Clock(), owner=lambda item: item.session_id)
    await p.warm(1, "kit")
    kit = await p.take("kit")
    (spared,) = p.end_session(kit.session_id, spare=("kit",))
    assert not p.give_back(spared, clean=False) and kit.killed
    p.tick()
    await settle()
    assert len(p.ready["kit"]) == 1 and len(maker.made) == 2


async def test_a_failed_start_fails_the_taker_it_was_started_for():
    maker = Maker()
    maker.fail = True
    p = pool(maker)
    with pytest.raises(RuntimeError, match="no node"):
        await asyncio.wait_for(p.take("home", "s"), 1)
    assert not p.waiting["home"] and p.starting["home"] == 0


async def test_a_cancelled_taker_leaves_its_late_item_ready():
    maker = Maker()
    maker.gate = asyncio.Event()
    p = pool(maker)
    take = asyncio.ensure_future(p.take("home", "s"))
    await settle()
    take.cancel()
    await settle()
    maker.gate.set()
    await settle()
    assert len(p.ready["home"]) == 1 and not p.waiting["home"]


async def test_warming_an_idle_lane_is_not_undone_by_its_decay_and_decays_only_after():
    """``warm(n)`` on a lane that lent before and is idle now: its old demand, decaying, must
    not let ticks drop what warm is starting (else warm starts them again, for ever)."""
    clock, maker = Clock(), Maker()
    p = pool(maker, clock, floor=0, parallel_starts=2)
    p.give_back(await p.take("home", "s"), clean=True)  # lent once: the lane's decay clock runs
    clock.now += 1000  # ten half-lives idle: its old demand is nothing now
    maker.gate = asyncio.Event()
    warming = asyncio.create_task(p.warm(6))
    for _ in range(200):  # cold starts slower than the ticks: five half-lives between two starts
        if warming.done():
            break
        await asyncio.sleep(0)
        clock.now += 500
        p.tick()
        maker.gate.set()
        await asyncio.sleep(0.01)
        maker.gate.clear()
    assert await asyncio.wait_for(warming, 5) == 6
    assert len(maker.made) == 6 and not any(item.killed for item in maker.made)
    clock.now += 100  # one half-life after warming: the decay starts from what warm asked for
    p.tick()
    assert p.target("home") == 3
