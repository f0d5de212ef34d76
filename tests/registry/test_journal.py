"""The registry's journal: a supervisor built again from it (a restarted registry actor) has the
books the first had, watches again only what was running, owes only the notices not delivered,
and answers a launch sent again from its books instead of starting it twice."""

from __future__ import annotations

import asyncio
import stat

import pytest

from covey.registry.journal import RegistryJournal, restore_books
from covey.registry.supervisor import Supervisor
from covey.runtime.answers import Finished, Launched
from covey.runtime.limits import Limits
from covey.runtime.records import FinalReport
from covey.teams.mailbox import Mailbox
from tests.registry.fakes import FakeClock, FakePool, request, runtime, settle, spec

LIMITS = Limits(max_depth=2, max_concurrent=8)


def _supervisor(journal: RegistryJournal | None = None) -> Supervisor:
    return Supervisor(LIMITS, pool=FakePool(), mailbox=Mailbox(), clock=FakeClock(), put=lambda value: "ref",
                      journal=journal)


@pytest.fixture
async def journaled(tmp_path):
    journal = RegistryJournal(tmp_path / "registry" / "kit.jsonl")
    journal.begin("s", Limits(max_depth=3, max_concurrent=5))
    first = _supervisor(journal)
    await first.register_main("main", "m", "/tmp")
    shared = runtime()
    for agent_id in ("a", "b", "c"):
        answer = await first.launch(request(agent_id), spec(agent_id, runtime=shared), output_file=f"/t/{agent_id}")
        assert isinstance(answer, Launched)
    first.books.actors["a"]._end.set_result(Finished(report=FinalReport(status="completed", text="A done")))
    await settle()
    yield first, journal
    await first.close()


async def test_a_restored_supervisor_has_the_books_and_watches_again_only_what_ran(journaled):
    first, journal = journaled
    assert stat.S_IMODE(journal.path.stat().st_mode) == 0o600
    restored = journal.read()
    assert restored.session_id == "s" and restored.limits.max_concurrent == 5
    second = _supervisor()
    rewatch, owed = restore_books(second.books, second.launcher, restored)
    assert second.books.core.main_agent_id == "main" and second.books.core.limits.max_concurrent == 5
    assert {agent_id: r.status for agent_id, r in second.books.core.records.items()} == {
        "main": "running", "a": "completed", "b": "running", "c": "running"}
    assert second.books.core.records["a"].notified and not second.books.core.records["a"].delivering
    assert [(agent_id, actor.name, output) for agent_id, actor, output in rewatch] == [
        ("b", "actor-2", "/t/b"), ("c", "actor-3", "/t/c")]
    assert owed == []
    assert set(second.books.specs) == {"a", "b", "c"}
    assert second.books.core.live_subagents() == 2  # the limits count what still runs


async def test_an_end_journaled_before_its_notice_was_delivered_is_owed_once(journaled):
    first, journal = journaled
    journal.write("ended", agent_id="b", payload=FinalReport(status="completed", text="B done"))
    second = _supervisor()
    rewatch, owed = restore_books(second.books, second.launcher, journal.read())
    assert [agent_id for agent_id, _, _ in rewatch] == ["c"] and owed == ["b"]
    record = second.books.core.records["b"]
    assert record.status == "completed" and not record.notified


async def test_a_launch_sent_again_after_a_restart_is_answered_from_the_books_not_started_again(journaled):
    _first, journal = journaled
    second = _supervisor()
    restore_books(second.books, second.launcher, journal.read())
    answer = await second.launch(request("c"), spec("c", runtime=runtime()), output_file="/t/c")
    assert isinstance(answer, Launched) and answer.record.agent_id == "c"
    assert second.books.pool.taken == []  # nothing started twice


def test_a_line_cut_short_by_a_crash_is_skipped_and_what_came_before_stands(tmp_path):
    journal = RegistryJournal(tmp_path / "kit.jsonl")
    journal.begin("s")
    journal.write("notified", agent_id="x")
    journal.close()
    with open(journal.path, "ab") as handle:
        handle.write(b'{"op": "ended", "agent_id": "y", "payload": "AAA')  # the process died mid-line
    restored = journal.read()
    assert restored.session_id == "s" and restored.notified == {"x"} and restored.ended == {}


async def test_a_background_agent_lost_with_its_node_goes_on_from_its_transcript_once(tmp_path):
    from covey.errors import AgentUnavailable

    lost_nodes: set[str] = set()
    supervisor = Supervisor(LIMITS, pool=FakePool(), mailbox=Mailbox(), clock=FakeClock(), put=lambda value: "ref",
                            load_history=lambda path: [{"role": "user", "content": "go on"}],
                            node_alive=lambda node: node not in lost_nodes)
    await supervisor.register_main("main", "m", "/tmp")
    await supervisor.launch(request("a"), spec("a", runtime=runtime()), output_file="/t/a")
    await supervisor.launch(request("b"), spec("b", runtime=runtime()), output_file="/t/b")
    first_a, first_b = supervisor.books.actors["a"], supervisor.books.actors["b"]
    lost_nodes.add("node-1")  # both ran there; "a" is lost with it
    gone = AgentUnavailable("actor 'a' is gone: The actor is unavailable: Socket closed")
    gone.restarting = True
    first_a.die(gone)
    await settle()
    revived = supervisor.books.actors["a"]
    assert revived is not first_a and first_a.killed
    started_spec, _how = revived.started[0]
    assert started_spec.history == [{"role": "user", "content": "go on"}] and started_spec.background
    assert supervisor.books.core.records["a"].status == "running"
    revived.end("A done")
    await settle()
    assert supervisor.books.core.records["a"].status == "completed"
    lost_nodes.clear()  # "b"'s actor crashes on a live node: not revived, failed once
    first_b.die()
    await settle()
    assert supervisor.books.core.records["b"].status == "failed" and supervisor.books.actors.get("b") is None
    await supervisor.close()


QUEUEING = Limits(max_depth=2, max_concurrent=1, queue_spawns=True)


async def _queued_behind_one(tmp_path):
    """A journaled supervisor with one slot: "a" runs, "b" waits in the queue."""
    journal = RegistryJournal(tmp_path / "registry" / "kit.jsonl")
    journal.begin("s", QUEUEING)
    first = Supervisor(QUEUEING, pool=FakePool(), mailbox=Mailbox(), clock=FakeClock(), put=lambda value: "ref",
                       journal=journal)
    await first.register_main("main", "m", "/tmp")
    shared = runtime()
    for agent_id in ("a", "b"):
        answer = await first.launch(request(agent_id), spec(agent_id, runtime=shared), output_file=f"/t/{agent_id}")
        assert isinstance(answer, Launched)
    assert first.books.core.records["b"].status == "queued" and len(first.books.pool.taken) == 1
    return first, journal, shared


def _restarted(journal: RegistryJournal) -> tuple[Supervisor, list, list]:
    """A registry made again from the journal, as the Ray actor's ``_restore`` makes it."""
    restored = journal.read()
    journal.reopen()
    second = Supervisor(QUEUEING, pool=FakePool(), mailbox=Mailbox(), clock=FakeClock(), put=lambda value: "ref",
                        journal=journal)
    rewatch, owed = restore_books(second.books, second.launcher, restored)
    return second, rewatch, owed


async def test_a_queued_launch_comes_back_in_the_queue_and_starts_with_its_runtime_when_a_slot_frees(tmp_path):
    first, journal, shared = await _queued_behind_one(tmp_path)
    await first.close()
    journal.close()  # the registry's process is killed
    second, rewatch, owed = _restarted(journal)
    assert second.books.core.queue.ids() == ["b"] and second.books.core.records["b"].status == "queued" and owed == []
    assert [agent_id for agent_id, _, _ in rewatch] == ["a"]
    (agent_id, actor, output_file), = rewatch
    actor._end = asyncio.get_running_loop().create_future()  # the agent actor still runs "a"
    await second.watcher.track(agent_id, actor, output_file, run=actor.report_for(agent_id))
    second.launcher.resume_queue()
    assert second.books.pool.taken == []  # no slot yet: "a" runs
    actor.end("A done")
    await settle()
    (started,) = second.books.pool.taken
    started_spec, how = started.started[0]
    assert started_spec.agent_id == "b" and how["runtime"].key == shared.key  # its runtime, read back
    assert second.books.core.records["b"].status == "running"
    third = journal.read()  # restarted again: "b" is running now, not queued
    assert "b" in third.launched and "b" not in third.queued
    await second.close()


async def test_a_queued_launch_whose_slot_freed_while_the_registry_was_down_starts_at_its_first_call(tmp_path):
    first, journal, _shared = await _queued_behind_one(tmp_path)
    await first.close()
    journal.write("ended", agent_id="a", payload=FinalReport(status="completed", text="A done"))
    second, rewatch, owed = _restarted(journal)
    assert rewatch == [] and owed == ["a"]
    second.launcher.resume_queue()  # the actor's ping does this after watching its agents again
    await settle()
    assert [s.agent_id for actor in second.books.pool.taken for s, _ in actor.started] == ["b"]
    await second.close()


async def test_a_queued_launch_that_cannot_be_read_back_fails_and_its_parent_is_told_once(tmp_path):
    first, journal, _shared = await _queued_behind_one(tmp_path)
    await first.close()
    journal.close()
    lines = [line for line in journal.path.read_bytes().splitlines(keepends=True) if b'"op": "runtime"' not in line]
    journal.path.write_bytes(b"".join(lines))  # its runtime's entry is lost
    second, _rewatch, owed = _restarted(journal)
    record = second.books.core.records["b"]
    assert owed == ["b"] and record.status == "failed" and "registry restarted" in record.report.text
    assert second.books.core.queue.ids() == [] and "b" not in second.launcher.waiting
    await second.watcher.ended("b", record.report)  # the actor's first call delivers the owed notices
    assert await second.watcher.mailbox.pending("main") == 1
    again = journal.read()  # written: a second restart does not fail it anew
    assert again.ended["b"].status == "failed"
    await second.close()


async def test_a_launch_killed_while_queued_is_not_started_after_a_restart(tmp_path):
    first, journal, _shared = await _queued_behind_one(tmp_path)
    assert await first.kill_agent("b")
    await settle()
    await first.close()
    second, _rewatch, owed = _restarted(journal)
    assert second.books.core.records["b"].status == "killed" and second.books.core.queue.ids() == [] and owed == []
    second.launcher.resume_queue()
    assert second.books.pool.taken == []
    await second.close()


async def test_a_restarted_registry_has_the_sessions_runtime_for_later_launches_and_resumes(journaled, tmp_path):
    """Every launch's runtime is journaled (once per key): the restarted registry starts a launch
    that names only its runtime's key, and resumes a finished agent, with it."""
    first, journal = journaled
    key = first.books.runtimes.newest.key
    second = Supervisor(LIMITS, pool=FakePool(), mailbox=Mailbox(), clock=FakeClock(), put=lambda value: "ref",
                        load_history=lambda path: [{"role": "user", "content": "go on"}])
    restore_books(second.books, second.launcher, journal.read())
    assert second.books.runtimes.newest is not None and second.books.runtimes.newest.key == key
    assert journal.path.read_text().count('"op": "runtime"') == 1  # three launches, one runtime

    answer = await second.launch(request("d"), spec("d"), output_file="/t/d", runtime_key=key)
    assert isinstance(answer, Launched)
    assert second.books.actors["d"].started[0][1]["runtime"].key == key
    assert await second.resume("a") is not None  # "a" had finished: woken with the session's runtime
    assert second.books.actors["a"].started[0][1]["runtime"].key == key
    await second.close()


async def test_a_queued_launch_killed_is_journaled_ended_before_its_worktree_is_seen_to(tmp_path):
    """A restart while the killed launch's worktree is still being cleaned does not start it."""
    first, journal, _shared = await _queued_behind_one(tmp_path)
    cleaning = asyncio.Event()

    async def slow_worktree(agent_id):
        await cleaning.wait()

    first.watcher.dead_agents_worktree = slow_worktree
    killing = asyncio.create_task(first.kill_agent("b"))
    await settle()
    assert not killing.done()  # still seeing to the worktree
    second, _rewatch, _owed = _restarted(journal)
    assert second.books.core.records["b"].status == "killed" and second.books.core.queue.ids() == []
    cleaning.set()
    await killing
    await first.close()
    await second.close()


async def test_what_a_running_agent_spent_is_journaled_so_a_restarted_registry_counts_it(journaled):
    from covey.model.usage import TokenUsage
    from covey.registry.checks import budget_spent

    first, journal = journaled
    await first.progress("b", cost_usd=0.42, turns=3, tool_uses=5, usage=TokenUsage(input_tokens=900, output_tokens=100),
                         seq=1)
    await first.progress("b", cost_usd=0.61, turns=4, seq=2)  # the latest figures win
    await first.progress("c", tools_in_flight=["Bash"], seq=1)  # no spend: nothing journaled for it
    second = _supervisor()
    restore_books(second.books, second.launcher, journal.read())
    b = second.books.core.records["b"]
    assert (b.cost_usd, b.turns, b.tool_uses, b.usage.total) == (0.61, 4, 5, 1000)
    assert second.books.core.records["c"].cost_usd == 0
    assert second.books.core.session_usage().cost_usd >= 0.61  # what `covey ps` and the budget read
    second.books.core.limits = second.books.core.limits.model_copy(update={"budget_usd": 0.5})
    assert budget_spent(second.books.core)  # the budget check counts it after the restart


async def test_a_background_launch_ray_held_when_the_registry_died_is_launched_again_by_the_restarted_one(tmp_path):
    """Its pending actor went with the old registry: the journal has it as queued until it starts."""
    from covey.ray.resources import AgentResources

    lane = AgentResources.model_validate({"browser": 1}).lane()
    journal = RegistryJournal(tmp_path / "registry" / "kit.jsonl")
    journal.begin("s", QUEUEING)
    first = Supervisor(QUEUEING, pool=FakePool(), mailbox=Mailbox(), clock=FakeClock(), put=lambda value: "ref",
                       journal=journal)
    first.books.pool.gates[lane] = asyncio.Event()  # no node has a browser: Ray holds the actor
    await first.register_main("main", "m", "/tmp")
    shared = runtime()
    answer = await first.launch(request("held"), spec("held", runtime=shared), lane=lane, output_file="/t/held")
    assert isinstance(answer, Launched) and first.books.pool.taken == []
    await first.close()
    journal.close()  # the registry's process is killed while Ray still holds the agent
    second, rewatch, owed = _restarted(journal)
    assert rewatch == [] and owed == [] and second.books.core.records["held"].status == "queued"
    second.launcher.resume_queue()
    await settle()
    (started,) = second.books.pool.taken
    assert started.started[0][0].agent_id == "held" and second.books.core.records["held"].status == "running"
    assert "held" in journal.read().launched and "held" not in journal.read().queued
    await second.close()
