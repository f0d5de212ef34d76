"""Queued spawns (docs/subagents.md#queued-spawns), driven without Ray: past the concurrency
limit a background launch waits in the registry's queue, starts in launch order when a
slot frees, and notifies its owner exactly once however it ends."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from typing import Any

import pytest

from covey.cli.inspect import session_lines
from covey.model.scripted import ScriptedModel
from covey.registry.core import Registry
from covey.registry.supervisor import Supervisor
from covey.runtime.answers import Launched, Refused
from covey.runtime.limits import Limits
from covey.runtime.payloads import LaunchCall
from covey.runtime.records import FinalReport
from covey.runtime.worktree import Worktree
from covey.session import Session
from covey.teams.mailbox import Mailbox
from covey.teams.messages import TaskNotice
from tests.registry.fakes import FakeActor, FakeClock, FakePool, request, spec


def _supervisor(max_concurrent: int = 2, queue: bool = True, **limits: Any) -> Supervisor:
    async def finish_worktree(worktree: Worktree) -> dict[str, Any] | None:
        return None  # unchanged: removed

    limits.setdefault("max_active", 0)  # the concurrency limit's queue alone, unless a test says
    return Supervisor(Limits(max_depth=2, max_concurrent=max_concurrent, stall_ms=60_000, queue_spawns=queue, **limits),
                      pool=FakePool(), mailbox=Mailbox(), clock=FakeClock(), finish_worktree=finish_worktree)


@pytest.fixture
async def sup():
    supervisor = _supervisor()
    await supervisor.register_main("main", "m", "/tmp")
    yield supervisor
    await supervisor.close()


async def _launch(sup: Supervisor, agent_id: str, background: bool = True, **req: Any) -> Launched | Refused:
    answer = await sup.launch(request(agent_id, background=background, **req), spec(agent_id),
                              follow=not background, output_file=f"/t/{agent_id}.jsonl")
    assert isinstance(answer, (Launched, Refused))
    return answer


def _started(sup: Supervisor) -> list[str]:
    """The agents started, in the order their actors were given them."""
    return [started.agent_id for actor in sup.books.pool.taken for started, _ in actor.started]


def _actor(sup: Supervisor, agent_id: str) -> FakeActor:
    return next(actor for actor in sup.books.pool.taken if actor.started[0][0].agent_id == agent_id)


def _notices(sup: Supervisor, recipient: str = "main") -> list[TaskNotice]:
    return [m for m in sup.watcher.mailbox.unread.get(recipient, []) if isinstance(m, TaskNotice)]


async def _turns(n: int = 30) -> None:
    """Let the watches, starts and deliveries that are ready run (none hops through a thread here)."""
    for _ in range(n):
        await asyncio.sleep(0)


async def test_past_the_limit_a_background_launch_is_queued_and_answered_at_once(sup):
    for name in ("a", "b", "c", "d"):
        answer = await _launch(sup, name)
        assert isinstance(answer, Launched) and answer.actor is None
    assert [r.status for r in await sup.records()] == ["running", "running", "running", "queued", "queued"]
    assert _started(sup) == ["a", "b"] and sup.books.core.queue.ids() == ["c", "d"]
    assert (await sup.record("c")).output_file == "/t/c.jsonl"
    # The owner waits for the queued ones' notices too: they will come.
    assert await sup.outstanding("main") == ["a#0", "b#0", "c#0", "d#0"]


async def test_covey_ps_shows_the_running_and_the_queued_agents_in_launch_order(sup):
    for name in ("a", "b", "c", "d"):
        await _launch(sup, name)
    lines = session_lines("abcd1234", await sup.records())
    assert lines[0] == "session abcd1234: 5 agents, 3 running, 2 queued, $0.0000"  # the main agent runs too
    assert [line.split()[0] for line in lines[1:]] == ["main", "a", "b", "c", "d"]
    assert [line.split()[2] for line in lines[1:]] == ["running"] * 3 + ["queued"] * 2
    _actor(sup, "a").end()
    await _turns()
    assert session_lines("abcd1234", await sup.records())[0] == "session abcd1234: 5 agents, 3 running, 1 queued, $0.0000"
    tree = await sup.tree()
    assert [child["status"] for child in tree["children"]] == ["completed", "running", "running", "queued"]


async def test_a_freed_slot_starts_the_oldest_queued_launch(sup):
    for name in ("a", "b", "c", "d", "e"):
        await _launch(sup, name)
    _actor(sup, "b").end("b done")
    await _turns()
    assert _started(sup) == ["a", "b", "c"] and sup.books.core.queue.ids() == ["d", "e"]
    assert (await sup.record("c")).live and sup.books.core.live_subagents() == 2
    _actor(sup, "a").end()
    _actor(sup, "c").end()
    await _turns()
    assert _started(sup) == ["a", "b", "c", "d", "e"] and sup.books.core.queue.ids() == []


async def test_a_new_launch_queues_behind_the_waiting_ones_even_when_a_slot_is_free(sup):
    for name in ("a", "b", "c"):
        await _launch(sup, name)
    sup.books.core.limits.max_concurrent = 3  # a slot frees without an end (the limit was raised)
    assert (await _launch(sup, "d")).record.queued  # not ahead of c
    assert sup.books.core.queue.ids() == ["c", "d"]


def test_the_freed_slot_passes_to_the_queue_in_the_same_step_as_the_end():
    """No launch can take a slot between an end and the queue's next start: the core hands it over synchronously."""
    core = Registry(Limits(max_concurrent=1, queue_spawns=True))
    core.register_main("main", model="m", cwd="/tmp")
    told: list[str] = []
    core.on_dequeue = lambda record: told.append(record.agent_id)
    assert [core.admit(request(name)).status for name in ("a", "b", "c")] == ["running", "queued", "queued"]
    core.finish("a", FinalReport(status="completed", text="done"))
    assert told == ["b"] and core.records["b"].live and core.live_subagents() == 1
    assert core.admit(request("d")).status == "queued" and core.queue.ids() == ["c", "d"]
    assert isinstance(core.admit(request("sync", background=False)), Refused)


async def test_queueing_off_keeps_the_refusal(sup):
    sup.books.core.limits.queue_spawns = False
    await _launch(sup, "a")
    await _launch(sup, "b")
    refused = await _launch(sup, "c")
    assert isinstance(refused, Refused) and refused.kind == "concurrency" and "Do not retry" in refused.text
    assert await sup.record("c") is None and sup.books.core.queue.ids() == []


async def test_a_sync_child_past_the_limit_is_still_refused(sup):
    await _launch(sup, "a")
    await _launch(sup, "b")
    refused = await _launch(sup, "sync", background=False)
    assert isinstance(refused, Refused) and refused.kind == "concurrency" and await sup.record("sync") is None


@pytest.mark.parametrize("fields, kind", [
    ({"depth": 3}, "depth"), ({"type_known": False}, "type"), ({"cwd_problem": "no such directory"}, "place"),
])
async def test_the_other_checks_still_refuse_at_once_past_the_limit(sup, fields, kind):
    await _launch(sup, "a")
    await _launch(sup, "b")
    refused = await _launch(sup, "c", **fields)
    assert isinstance(refused, Refused) and refused.kind == kind and sup.books.core.queue.ids() == []


async def test_a_spent_budget_refuses_at_once_rather_than_queueing(sup):
    await _launch(sup, "a")
    await _launch(sup, "b")
    sup.books.core.limits.budget_usd = 0.0
    refused = await _launch(sup, "c")
    assert isinstance(refused, Refused) and refused.kind == "budget"


async def test_a_queued_agent_whose_turn_comes_after_the_budget_is_spent_fails_naming_it(sup):
    sup.books.core.limits.budget_usd = 1.0
    for name in ("a", "b", "c"):
        await _launch(sup, name)
    _actor(sup, "a").end("a done", cost_usd=1.5)
    await _turns()
    record = await sup.record("c")
    assert record.status == "failed" and "session budget of $1.00 is spent" in record.report.text
    assert _started(sup) == ["a", "b"]
    [a, c] = _notices(sup)
    assert (a.task_id, c.task_id, c.status) == ("a", "c", "failed") and "budget" in c.result


async def test_killing_a_queued_agent_takes_it_out_of_the_queue_with_one_killed_notice(sup):
    for name in ("a", "b", "c", "d"):
        await _launch(sup, name)
    assert await sup.kill_agent("c", "killed", "stopped by TaskStop") is True
    record = await sup.record("c")
    assert record.status == "killed" and "stopped by TaskStop" in record.report.text
    assert sup.books.core.queue.ids() == ["d"] and "c" not in sup.launcher.waiting
    await _turns()
    [notice] = _notices(sup)
    assert (notice.task_id, notice.status) == ("c", "killed")
    assert await sup.kill_agent("c") is False  # ended: nothing more to stop, no second notice
    _actor(sup, "a").end()
    await _turns()
    assert _started(sup) == ["a", "b", "d"]  # c never starts
    assert Counter(n.task_id for n in _notices(sup)) == {"c": 1, "a": 1}


async def test_the_sessions_end_cancels_its_queued_agents_without_starting_them(sup):
    for name in ("a", "b", "c", "d"):
        await _launch(sup, name)
    await sup.stop_all("the run was interrupted", grace_s=1.0)
    await _turns()
    assert _started(sup) == ["a", "b"]
    assert {r.agent_id: r.status for r in await sup.records() if r.agent_id != "main"} == {
        "a": "killed", "b": "killed", "c": "killed", "d": "killed"}
    assert sorted(n.task_id for n in _notices(sup)) == ["a", "b", "c", "d"]
    assert await sup.outstanding("main") == []


async def test_a_queued_agent_that_cannot_be_started_fails_with_a_notice_and_the_next_one_starts(sup):
    for name in ("a", "b", "c", "d"):
        await _launch(sup, name)
    take = sup.books.pool.take

    async def take_once_failing(lane: str = "home") -> FakeActor:
        sup.books.pool.take = take
        raise RuntimeError("no node can host it")

    sup.books.pool.take = take_once_failing
    _actor(sup, "a").end()
    await _turns()
    record = await sup.record("c")
    assert record.status == "failed" and "could not be started: no node can host it" in record.report.text
    assert _started(sup) == ["a", "b", "d"]
    assert Counter(n.task_id for n in _notices(sup)) == {"a": 1, "c": 1}


async def test_the_children_of_an_owner_that_ended_notify_the_main_agent_from_the_queue(sup):
    await _launch(sup, "parent")
    await _launch(sup, "other")
    await _launch(sup, "kid", parent="parent", depth=2)  # queued, owned by parent
    _actor(sup, "parent").end()
    await _turns()
    _actor(sup, "kid").end("kid done")
    await _turns()
    assert Counter(n.task_id for n in _notices(sup)) == {"parent": 1, "kid": 1}


async def test_a_thousand_queued_with_a_limit_of_fifty_all_finish_each_notified_once():
    sup = _supervisor(max_concurrent=50)
    await sup.register_main("main", "m", "/tmp")
    names = [f"agent-{i:04d}" for i in range(1000)]
    answers = [answer async for answer in sup.launch_many([LaunchCall(request(n), spec(n)) for n in names])]
    assert len(answers) == 1000 and all(isinstance(a, Launched) for _, a in answers)
    rng, most = random.Random(25), 0
    while running := [actor for actor in sup.books.pool.taken if not actor._end.done()]:
        most = max(most, len(running), sup.books.core.live_subagents())
        for actor in rng.sample(running, min(len(running), rng.randint(1, 20))):
            actor.end()
        await _turns(40)
    assert most == 50 and _started(sup) == names  # launch order, never more than the limit
    assert all(r.status == "completed" for r in await sup.records() if r.agent_id != "main")
    assert Counter(n.task_id for n in _notices(sup)) == Counter(names)
    assert await sup.outstanding("main") == [] and sup.books.core.queue.ids() == [] and sup.launcher.waiting == {}
    await sup.close()


def test_the_switch_comes_from_the_env_and_is_off_by_default():
    assert Limits.from_env({}).queue_spawns is False
    assert Limits.from_env({"COVEY_QUEUE_SPAWNS": "1"}).queue_spawns is True
    assert Limits.from_env({"COVEY_QUEUE_SPAWNS": "0"}).queue_spawns is False


@pytest.mark.parametrize("setting, env, on", [
    (None, {}, False), (True, {}, True), (None, {"COVEY_QUEUE_SPAWNS": "1"}, True), (False, {"COVEY_QUEUE_SPAWNS": "1"}, False),
])
def test_the_queue_spawns_setting_beats_the_env_switch(tmp_path, setting, env, on):
    if setting is not None:
        (tmp_path / ".covey").mkdir()
        (tmp_path / ".covey" / "settings.json").write_text(json.dumps({"queueSpawns": setting}))
    session = Session(cwd=str(tmp_path), model=ScriptedModel(), env={"HOME": str(tmp_path / "home"), **env})
    assert session.limits.queue_spawns is on
