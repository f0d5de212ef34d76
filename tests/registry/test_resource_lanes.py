"""Launches that ask Ray for resources, driven without Ray: a gated fake pool stands for Ray
holding the actor (no node has what it asks), a fake clock, the in-memory mailbox."""

from __future__ import annotations

import asyncio
import itertools

import pytest

import covey.registry.launcher as launcher
from covey.cli.inspect import session_lines
from covey.definitions.definition import AgentDefinition
from covey.ray.resources import AgentResources
from covey.registry.supervisor import Supervisor
from covey.registry.warm_pool import WarmPool
from covey.runtime.answers import Launched, Refused
from covey.runtime.limits import Limits
from covey.teams.mailbox import Mailbox
from covey.teams.messages import TaskNotice
from tests.registry.fakes import FakeClock, FakePool, request, runtime, settle, spec

LANE = AgentResources.model_validate({"browser": 1}).lane()


@pytest.fixture
async def sup(monkeypatch):
    monkeypatch.setattr(launcher, "PLACEMENT_NOTE_S", 0.01)
    monkeypatch.setattr(launcher, "placement_wait", lambda asked: f"queued by Ray: no node has {asked}")
    pool = FakePool()
    pool.gates[LANE] = asyncio.Event()  # Ray holds the actor until the gate opens
    history: dict[str, list] = {}
    supervisor = Supervisor(Limits(max_depth=2, max_concurrent=8, stall_ms=60_000), pool=pool, mailbox=Mailbox(),
                            clock=FakeClock(), load_history=lambda path: history.get(path, []))
    supervisor.history = history
    await supervisor.register_main("main", "m", "/tmp")
    yield supervisor
    await supervisor.close()


async def _held(sup: Supervisor, agent_id: str):
    for _ in range(200):
        if (record := await sup.record(agent_id)) is not None and record.waiting_for:
            return record
        await asyncio.sleep(0.01)
    raise AssertionError("the record never said why Ray holds it")


def _notices(sup: Supervisor) -> list[TaskNotice]:
    return [m for m in sup.watcher.mailbox.unread.get("main", []) if isinstance(m, TaskNotice)]


async def test_a_held_background_launch_is_answered_at_once_says_why_and_starts_when_placed(sup):
    answer = await asyncio.wait_for(sup.launch(request("gpu"), spec("gpu"), lane=LANE), 1)
    assert isinstance(answer, Launched) and answer.record.status == "running"
    record = await _held(sup, "gpu")
    assert record.waiting_for == "queued by Ray: no node has browser=1"
    [row] = [line for line in session_lines("s", await sup.records()) if "gpu" in line]
    assert "(queued by Ray: no node has browser=1)" in row
    sup.books.pool.gates[LANE].set()  # a node with a browser joined
    await settle()
    record = await sup.record("gpu")
    assert record.waiting_for is None and record.live and sup.books.actors.get("gpu") is not None


async def test_a_held_launch_killed_never_starts_and_its_owner_is_told_once(sup):
    await sup.launch(request("held"), spec("held"), lane=LANE)
    await _held(sup, "held")
    assert await sup.kill_agent("held", reason="stopped by the person")
    await settle()
    record = await sup.record("held")
    assert record.status == "killed" and record.report.text.endswith("(while Ray held it: it never started)")
    assert record.waiting_for is None and sup.books.pool.taken == [] and "held" not in sup.launcher.placing
    assert [n.task_id for n in _notices(sup)] == ["held"]
    sup.books.pool.gates[LANE].set()
    await settle()
    assert sup.books.pool.taken == [] and (await sup.record("held")).status == "killed"


async def test_a_held_sync_launch_killed_answers_that_it_did_not_start(sup):
    launch = asyncio.ensure_future(sup.launch(request("sync", background=False), spec("sync"), follow=True, lane=LANE))
    await _held(sup, "sync")
    assert await sup.kill_agent("sync")
    answer = await asyncio.wait_for(launch, 1)
    assert isinstance(answer, Refused) and answer.kind == "start" and "while Ray held it" in answer.text
    assert sup.books.pool.taken == []


async def test_stopping_the_run_ends_a_held_launch_too(sup):
    await sup.launch(request("held"), spec("held"), lane=LANE)
    await _held(sup, "held")
    await sup.stop_all("interrupted", grace_s=0.5)
    await settle()
    record = await sup.record("held")
    assert record.status == "killed" and record.report.text == "interrupted (while Ray held it: it never started)"
    assert sup.launcher.placing == {} and [n.task_id for n in _notices(sup)] == ["held"]


async def test_a_finished_agent_that_asks_is_resumed_on_an_actor_made_with_its_resources(sup):
    lanes: list[str] = []
    take = sup.books.pool.take
    sup.books.pool.take = lambda lane="home": lanes.append(lane) or take(lane)
    sup.books.pool.gates[LANE].set()
    asking = AgentDefinition(name="t", resources={"browser": 1})
    asked = spec("child", runtime=runtime(teams=True)).model_copy(update={"definition": asking})
    await sup.launch(request("child"), asked, lane=LANE, output_file="/t/child.jsonl")
    await settle()
    sup.books.pool.taken[0].end()
    await settle()
    sup.history["/t/child.jsonl"] = [{"role": "user", "content": "hi"}]
    assert (await sup.resume("child")).endswith("resumed from its transcript to read the message.")
    assert lanes == [LANE, LANE]


async def test_a_plain_lane_launch_waits_for_its_actor_and_says_nothing(sup):
    sup.books.pool.gates["home"] = gate = asyncio.Event()
    launch = asyncio.ensure_future(sup.launch(request("plain"), spec("plain")))
    await asyncio.sleep(0.05)
    assert not launch.done() and (await sup.record("plain")).waiting_for is None
    gate.set()
    assert isinstance(await launch, Launched)


async def test_the_warm_pool_makes_a_fresh_actor_for_a_resource_lane_and_never_keeps_it():
    made, lanes = [], []
    counter = itertools.count()

    class Actor:
        def __init__(self) -> None:
            self.n, self.killed = next(counter), False

        async def reset(self) -> bool:
            return True

        def kill(self) -> None:
            self.killed = True

    async def create(lane: str) -> Actor:
        lanes.append(lane)
        made.append(Actor())
        return made[-1]

    pool = WarmPool(create, {"home": 2}, refill_delay_s=0)
    await pool.warm(2)
    actor = await pool.take(LANE)
    assert lanes == ["home", "home", LANE] and actor is made[-1]
    assert not await pool.give_back(actor) and actor.killed  # its GPU goes back to Ray
    await asyncio.sleep(0)
    assert lanes == ["home", "home", LANE] and pool.stats()["ready"].get(LANE, 0) == 0
