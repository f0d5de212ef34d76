"""The machine's share (docs/subagents.md#the-machines-share), driven without Ray: past the
sub-agents at work at once (``Limits.max_active``, by default ``ACTIVE_PER_CPU`` per CPU of
the cluster) a background launch waits in the queue, queueing on or off, and starts when one
at work ends or parks; a sync child and a teammate start at once."""

from __future__ import annotations

from typing import Any

from covey.cli.inspect import session_lines
from covey.registry.core import Registry
from covey.registry.queue import at_work
from covey.registry.supervisor import Supervisor
from covey.runtime.answers import Launched
from covey.runtime.limits import ACTIVE_PER_CPU, Limits
from covey.subagents.launch import QUEUED_NOTES
from covey.teams.mailbox import Mailbox
from tests.registry.fakes import FakeClock, FakePool, request, spec
from tests.registry.test_queue import _actor, _launch, _started, _turns


def _supervisor(max_active: int | None = 2, **limits: Any) -> Supervisor:
    return Supervisor(Limits(max_depth=2, max_concurrent=10, stall_ms=60_000, queue_spawns=False,
                             max_active=max_active, **limits),
                      pool=FakePool(), mailbox=Mailbox(), clock=FakeClock())


async def test_past_the_agents_at_work_a_background_launch_waits_and_starts_when_one_ends():
    sup = _supervisor()
    await sup.register_main("main", "m", "/tmp")
    answers = [await _launch(sup, name) for name in ("a", "b", "c")]
    assert all(isinstance(answer, Launched) for answer in answers)  # queueing off: nobody refused
    c = await sup.record("c")
    assert c.status == "queued" and c.queued_for == "active" and _started(sup) == ["a", "b"]
    (line,) = [line for line in session_lines("abcd1234", await sup.records()) if " c " in f"{line} "]
    assert line.endswith("(waits: the agents at work)")  # covey ps says why
    _actor(sup, "a").end()
    await _turns()
    c = await sup.record("c")
    assert c.status == "running" and c.queued_for is None and _started(sup) == ["a", "b", "c"]


async def test_an_agent_parked_for_its_own_children_frees_its_place():
    sup = _supervisor()
    await sup.register_main("main", "m", "/tmp")
    for name in ("a", "b", "c"):
        await _launch(sup, name)
    await sup.set_parked("a", True)
    await _turns()
    assert _started(sup) == ["a", "b", "c"]
    await sup.set_parked("a", False)  # back at work: over the share for a while, nothing stops
    assert at_work(sup.books.core) == 3


async def test_a_sync_child_and_a_teammate_start_at_once_and_a_new_launch_waits_behind_the_queue():
    sup = _supervisor(max_active=1)
    await sup.register_main("main", "m", "/tmp")
    await _launch(sup, "a")
    await _launch(sup, "b")  # waits
    assert isinstance(await _launch(sup, "sync", background=False), Launched)
    assert isinstance(await _launch(sup, "mate", spawns_teammate=True, team_name="t", member_name="m1"), Launched)
    assert _started(sup) == ["a", "sync", "mate"]
    _actor(sup, "sync").end()
    _actor(sup, "mate").end()
    await _turns()
    assert _started(sup) == ["a", "sync", "mate"]  # a still at work: b still waits
    await _launch(sup, "c")  # behind b, though nothing else changed
    _actor(sup, "a").end()
    await _turns()
    assert _started(sup)[-1] == "b" and (await sup.record("c")).status == "queued"


async def test_zero_turns_the_share_off():
    sup = _supervisor(max_active=0)
    await sup.register_main("main", "m", "/tmp")
    for name in "abcdef":
        await _launch(sup, name)
    assert _started(sup) == list("abcdef")


def test_the_share_is_sixteen_per_cpu_of_the_cluster_unless_set():
    assert Limits(max_active=None).active_limit(2) == 2 * ACTIVE_PER_CPU == 32
    assert Limits(max_active=None).active_limit(0) == ACTIVE_PER_CPU
    assert Limits(max_active=5).active_limit(64) == 5
    assert Limits(max_active=0).active_limit(2) is None
    core = Registry(Limits(max_active=None))
    core.cpus = 4
    assert core.limits.active_limit(core.cpus) == 64
    assert Limits.from_env({"COVEY_MAX_ACTIVE_AGENTS": "7"}).max_active == 7
    assert Limits.from_env({}).max_active is None


def test_the_answer_says_why_a_launch_waits():
    assert "as many background agents are at work" in QUEUED_NOTES["active"]
    assert "concurrency limit" in QUEUED_NOTES["concurrency"]
