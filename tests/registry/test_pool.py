"""The warm pool's rules, driven with fake actors (no Ray)."""

from __future__ import annotations

import asyncio
import itertools

from covey.registry.warm_pool import WarmPool


class FakeActor:
    def __init__(self, n: int, clean: bool = True) -> None:
        self.n, self.clean, self.killed, self.resets = n, clean, False, 0

    async def reset(self) -> bool:
        self.resets += 1
        return self.clean

    def kill(self) -> None:
        self.killed = True

    def __repr__(self) -> str:
        return f"actor{self.n}"


def pool_of(size: int, **kw) -> tuple[WarmPool, list[FakeActor]]:
    made: list[FakeActor] = []
    counter = itertools.count()

    async def create(lane: str) -> FakeActor:
        await asyncio.sleep(0)
        made.append(FakeActor(next(counter)))
        return made[-1]

    kw.setdefault("refill_delay_s", 0)
    return WarmPool(create, {"home": size}, **kw), made


async def settle(pool: WarmPool) -> None:
    while pool._refills:
        await asyncio.gather(*list(pool._refills))


async def test_warm_fills_the_lane_and_take_hands_out_ready_actors():
    pool, made = pool_of(4)
    assert await pool.warm(4) == 4 and len(made) == 4
    actor = await pool.take()
    assert actor in made and len(made) == 4  # warm: nothing created for it


async def test_a_sync_child_cycle_starts_no_new_actor():
    """take + give_back, again and again: the same warm actor serves, no process is started."""
    pool, made = pool_of(4)
    await pool.warm(4)
    used = []
    for _ in range(10):
        actor = await pool.take()
        await settle(pool)
        assert await pool.give_back(actor)
        used.append(actor)
    assert len(made) == 4
    assert len(set(used)) == 1  # the actor given back last is taken next (its connections are open)


async def test_under_half_the_pool_it_refills_to_the_full_size():
    pool, made = pool_of(4)
    await pool.warm(4)
    taken = [await pool.take(), await pool.take()]
    await settle(pool)
    assert len(made) == 4  # two of four left: still at half
    taken.append(await pool.take())  # one left: under half
    await settle(pool)
    assert len(pool.ready["home"]) == 4 and len(made) == 7
    assert all(not a.killed for a in taken)


async def test_the_refill_waits_out_a_burst_whose_actors_come_back():
    pool, made = pool_of(4, refill_delay_s=0.05)
    await pool.warm(4)
    burst = [await pool.take() for _ in range(4)]
    for actor in burst:  # the children of the burst end within the delay
        assert await pool.give_back(actor)
    await settle(pool)
    assert len(made) == 4 and len(pool.ready["home"]) == 4  # no process was started for nothing


async def test_a_lane_left_under_half_is_refilled_after_the_delay():
    pool, made = pool_of(4, refill_delay_s=0.05)
    await pool.warm(4)
    taken = [await pool.take() for _ in range(3)]
    assert len(made) == 4  # nothing started during the burst
    await settle(pool)
    assert len(pool.ready["home"]) == 4 and len(made) == 7 and taken


async def test_a_warmed_lane_keeps_its_actors_but_refills_only_to_its_size():
    pool, made = pool_of(2)
    assert await pool.warm(6) == 6
    burst = [await pool.take() for _ in range(6)]
    await settle(pool)
    assert len(made) == 8  # two replacements (the configured size), not six
    kept = [await pool.give_back(actor) for actor in burst]
    assert kept.count(True) == 4 and len(pool.ready["home"]) == 6  # up to the warmed six stay warm


async def test_a_lane_with_a_floor_starts_there_and_grows_with_demand_up_to_its_size():
    pool, made = pool_of(8, floors={"home": 2})
    pool.fill("home")
    await settle(pool)
    assert len(made) == 2  # the floor, not the size: a run of one agent starts no eight processes
    taken = [await pool.take() for _ in range(3)]  # a main agent and two children at once
    await settle(pool)
    assert len(made) == 3 + 3 and len(pool.ready["home"]) == 3  # refilled for the demand seen: three
    for actor in taken:
        assert await pool.give_back(actor)
    burst = [await pool.take() for _ in range(12)]  # a fan-out past the size
    await settle(pool)
    assert len(pool.ready["home"]) == 8 and pool.stats()["targets"] == {"home": 8}  # never over the size
    assert burst


async def test_session_floors_start_the_home_lane_at_covey_pool_floor_and_the_others_empty(monkeypatch):
    from covey.registry.warm_pool import session_floors

    assert session_floors({"home": 8, "any": 8}) == {"home": 2, "any": 0}
    monkeypatch.setenv("COVEY_POOL_FLOOR", "5")
    assert session_floors({"home": 8}) == {"home": 5} and session_floors({"home": 3}) == {"home": 3}


async def test_a_pool_of_size_zero_starts_every_actor_cold_and_keeps_none():
    pool, made = pool_of(0)
    actor = await pool.take()
    assert made == [actor]
    assert not await pool.give_back(actor) and actor.killed
    assert await pool.take() is not actor and len(made) == 2


async def test_dirty_or_worn_actors_are_killed_not_kept():
    pool, made = pool_of(2, max_uses=2)
    await pool.warm(2)
    dirty = await pool.take()
    dirty.clean = False
    assert not await pool.give_back(dirty) and dirty.killed
    worn = await pool.take()
    assert await pool.give_back(worn)
    assert await pool.take() is worn  # second use
    # max_uses reached: killed, but only after its reset (which waits for the run's follower)
    assert not await pool.give_back(worn) and worn.killed and worn.resets == 2


async def test_an_actor_that_already_reset_itself_is_not_asked_again():
    pool, made = pool_of(2)
    await pool.warm(2)
    clean, dirty = await pool.take(), await pool.take()
    assert await pool.give_back(clean, True) and clean.resets == 0
    assert not await pool.give_back(dirty, False) and dirty.killed and dirty.resets == 0


async def test_at_most_twice_the_size_is_kept_warm():
    pool, made = pool_of(1)
    await pool.warm(1)
    extra = [FakeActor(100 + i) for i in range(3)]
    for actor in extra:
        pool.lane_of[actor] = "home"
    kept = [await pool.give_back(actor) for actor in extra]
    assert kept == [True, False, False] and len(pool.ready["home"]) == 2


async def test_an_actor_is_killed_only_after_its_reset_says_the_follower_has_the_report():
    """The recycling race: a sync child's actor that comes back to a full lane was killed at
    once, while its parent was still receiving the run's report, which was then lost."""
    pool, made = pool_of(1)
    await pool.warm(1)
    released = asyncio.Event()
    killed_before_release: list[bool] = []

    class FollowedActor(FakeActor):
        async def reset(self) -> bool:
            await released.wait()  # the runner's reset waits for the follower's ``received``
            return await super().reset()

        def kill(self) -> None:
            killed_before_release.append(not released.is_set())
            super().kill()

    extra = [FollowedActor(100 + i) for i in range(3)]
    for actor in extra:
        pool.lane_of[actor] = "home"
    backs = [asyncio.create_task(pool.give_back(actor)) for actor in extra]
    await asyncio.sleep(0.05)
    assert not any(actor.killed for actor in extra)  # the lane is full, but the reports are on their way
    released.set()
    assert [await back for back in backs].count(True) == 1  # one fits beside the warm one
    assert killed_before_release == [False, False]


async def test_an_any_lane_actor_is_pinned_hard_and_placed_by_ray_if_its_node_is_gone():
    from covey.agent.factory import AgentFactory
    from covey.errors import AgentUnavailable

    factory = AgentFactory("session-1")
    gone = "ab" * 28  # a well-formed node id of a node that is no more
    factory._next_node = lambda: gone
    tried: list[object] = []

    async def started(name: str, strategy: object) -> str:
        tried.append(strategy)
        if len(tried) == 1:
            raise AgentUnavailable("its node died")
        return name

    factory._started = started
    assert await factory.create("any") == "covey:session-:agent-1"
    pinned, fallback = tried
    assert pinned.node_id == gone and pinned.soft is False  # soft affinity was seen misplacing a third
    assert fallback == "SPREAD"
