"""The registry's supervision rules, driven without Ray: fake actors and pool, the in-memory mailbox, a fake clock."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from covey.errors import AgentUnavailable
from covey.registry.supervisor import Supervisor
from covey.runtime.answers import Launched, NeedRuntime, Refused
from covey.runtime.limits import Limits
from covey.runtime.payloads import LaunchCall
from covey.runtime.worktree import Worktree
from covey.teams.mailbox import Mailbox
from covey.teams.messages import TaskNotice
from covey.teams.render import render_notice
from covey.teams.tasks import Task
from tests.registry.fakes import FakeClock, FakePool, request, runtime, settle, spec


@pytest.fixture
async def sup():
    history: dict[str, list[Any]] = {}
    kept: list[dict[str, Any]] = []

    async def finish_worktree(worktree: Worktree) -> dict[str, Any] | None:
        kept.append(worktree)
        return {**worktree.model_dump(), "kept": True}

    puts: list[Any] = []
    places: dict[str, str] = {}
    supervisor = Supervisor(
        Limits(max_depth=2, max_concurrent=8, stall_ms=1000), pool=FakePool(), mailbox=Mailbox(), clock=FakeClock(),
        load_history=lambda path: history.get(path, []), finish_worktree=finish_worktree,
        place_problem=lambda spec: places.get(spec.agent_id),
        put=lambda value: puts.append(value) or f"ref-{len(puts)}",
    )
    supervisor.history, supervisor.kept, supervisor.puts = history, kept, puts  # what the fakes saw
    supervisor.places = places
    await supervisor.register_main("main", "m", "/tmp")
    yield supervisor
    await supervisor.close()


async def _launch(sup: Supervisor, agent_id: str = "child", *, follow: bool = False, **fields: Any) -> Launched:
    answer = await sup.launch(request(agent_id, background=not follow, **fields.pop("req", {})),
                              spec(agent_id, **fields), follow=follow, output_file=f"/t/{agent_id}.jsonl")
    assert isinstance(answer, Launched), answer
    return answer


def _notices(sup: Supervisor, recipient: str = "main") -> list[TaskNotice]:
    return [m for m in sup.watcher.mailbox.unread.get(recipient, []) if isinstance(m, TaskNotice)]


# --- launch -------------------------------------------------------------------

@pytest.mark.parametrize("fields, kind", [
    ({"depth": 3}, "depth"), ({"type_known": False}, "type"), ({"cwd_problem": "cwd '/nope' does not exist"}, "place"),
    ({"worktree_with_cwd": True}, "place"), ({"spawns_teammate": True, "caller_role": "teammate", "parent": "x"}, "role"),
])
async def test_a_refused_launch_says_which_check_and_leaves_nothing_behind(sup, fields, kind):
    answer = await sup.launch(request(**fields), spec())
    assert isinstance(answer, Refused) and answer.kind == kind and answer.text
    assert await sup.record("child") is None and sup.books.pool.taken == [] and sup.books.watches == {}


async def test_the_concurrency_and_budget_limits_are_refusals_naming_the_limit(sup):
    sup.books.core.limits.max_concurrent = 1
    await _launch(sup, "a")
    refused = await sup.launch(request("b"), spec("b"))
    assert isinstance(refused, Refused) and refused.kind == "concurrency" and "Do not retry" in refused.text
    sup.books.core.limits.max_concurrent, sup.books.core.limits.budget_usd = 8, 0.0
    assert (await sup.launch(request("c"), spec("c"))).kind == "budget"
    assert [r.agent_id for r in await sup.records()] == ["main", "a"]


async def test_no_actor_to_be_had_undoes_the_reservation(sup):
    sup.books.pool.fail = AgentUnavailable("no node can host it")
    answer = await sup.launch(request(), spec())
    assert isinstance(answer, Refused) and answer.kind == "start"
    assert answer.text == "The agent could not be started: no node can host it"
    assert await sup.record("child") is None and sup.books.core.live_subagents() == 0


async def test_a_sync_start_that_fails_kills_the_actor_it_took(sup):
    async def broken(*args: Any, **kwargs: Any) -> str:
        raise RuntimeError("bad spec")

    sup.books.pool.take = _patched_take(sup.books.pool, start=broken)
    answer = await sup.launch(request(background=False), spec(), follow=True)
    assert isinstance(answer, Refused) and "bad spec" in answer.text
    assert sup.books.pool.taken[0].killed and await sup.record("child") is None


def _patched_take(pool: FakePool, **methods: Any):
    take = pool.take

    async def patched(lane: str = "home"):
        actor = await take(lane)
        actor.__dict__.update(methods)
        return actor

    return patched


async def test_a_sync_launch_hands_back_the_started_actor_and_its_end_notifies_nobody(sup):
    launched = await _launch(sup, follow=True)
    actor = launched.actor
    assert launched.record.live and actor is sup.books.pool.taken[0] and actor.started[0][1]["follow"] is True
    actor.end("the answer", reset="unchecked")
    await settle()
    record = await sup.record("child")
    assert record.status == "completed" and record.report.text == "the answer"
    assert _notices(sup) == [] and sup.books.pool.given_back == [(actor, None)]  # the pool asks it to reset


async def test_a_background_launch_is_answered_at_once_and_its_end_notifies_its_owner_once(sup):
    launched = await _launch(sup)
    actor = sup.books.pool.taken[0]
    assert launched.actor is None and actor.started[0][1] == {"runtime": None, "runtime_ref": None}
    assert (await sup.record("child")).node_id == "node-1" and await sup.outstanding("main") == ["child#0"]
    actor.end("found it")
    await settle()
    [notice] = _notices(sup)
    assert notice.task_id == "child" and notice.key == "child#0" and "found it" in render_notice(notice)
    assert sup.books.pool.given_back == [(actor, True)] and await sup.outstanding("main") == []


async def test_a_notice_the_agent_put_itself_is_not_sent_again(sup):
    await _launch(sup)
    sup.books.pool.taken[0].end(delivered_at=123.0)
    await settle()
    assert _notices(sup) == [] and (await sup.record("child")).notified_at == 123.0


async def test_launch_many_answers_each_launch_as_it_is_ready_with_checks_in_order(sup):
    sup.books.core.limits.max_concurrent = 2
    gate = sup.books.pool.gates["any"] = asyncio.Event()
    launches = [LaunchCall(request(name), spec(name), False, lane) for name, lane in (("slow", "any"), ("warm", "home"), ("over", "home"))]
    answers = sup.launch_many(launches)
    first = await answers.__anext__()
    second = await answers.__anext__()
    assert first[0] in (1, 2) and second[0] in (1, 2)
    assert isinstance(dict([first, second])[2], Refused)  # checked after "slow" and "warm" reserved
    gate.set()
    index, answer = await answers.__anext__()
    assert index == 0 and isinstance(answer, Launched)


async def test_the_runtime_is_put_once_per_key_and_a_key_not_held_asks_for_it(sup):
    shared = runtime()
    for name in ("a", "b"):
        await _launch(sup, name, runtime=shared)
    assert sup.puts == [shared]
    assert [how["runtime_ref"] for actor in sup.books.pool.taken for _, how in actor.started] == ["ref-1", "ref-1"]
    assert [started.runtime for actor in sup.books.pool.taken for started, _ in actor.started] == [None, None]
    assert isinstance(await sup.launch(request("c"), spec("c"), runtime_key="unknown"), NeedRuntime)
    assert await sup.record("c") is None


# --- resume -----------------------------------------------------------------

@pytest.mark.parametrize("switch", ["teams", "coordinator"])
async def test_a_finished_agent_with_a_transcript_is_resumed_under_the_same_id(sup, switch):
    sup.books.core.limits.max_concurrent = 8
    # With teams, and in coordinator mode (a worker continued), its spec is kept for SendMessage.
    await _launch(sup, runtime=runtime(**{switch: True}))
    sup.books.pool.taken[0].end()
    await settle()
    assert await sup.resume("child") is None  # no transcript to rebuild it from
    sup.history["/t/child.jsonl"] = [{"role": "user", "content": "hi"}]
    note = await sup.resume("child")
    assert note == "child had finished; it was resumed from its transcript to read the message."
    record = await sup.record("child")
    assert record.live and record.runs == 1 and record.notice_key == "child#1"
    resumed, how = sup.books.pool.taken[1].started[0]
    assert resumed.history == [{"role": "user", "content": "hi"}] and resumed.background
    assert await sup.resume("child") is None  # running: it reads the message between turns


async def test_an_agent_whose_place_cannot_be_verified_is_not_resumed(sup):
    """A worktree removed or no longer this repository's, a directory gone: refused, not adopted."""
    await _launch(sup, runtime=runtime(teams=True))
    sup.books.pool.taken[0].end()
    await settle()
    sup.history["/t/child.jsonl"] = [{"role": "user", "content": "hi"}]
    sup.places["child"] = "The worktree '/tmp/wt' no longer exists."
    note = await sup.resume("child")
    assert note == "child had finished and was not resumed: The worktree '/tmp/wt' no longer exists."
    record = await sup.record("child")
    assert record.status == "completed" and record.runs == 0 and len(sup.books.pool.taken) == 1


async def test_mail_that_came_during_the_last_turn_resumes_an_agent_with_background_children(sup):
    await _launch(sup, "parent")
    await _launch(sup, "kid", req={"parent": "parent", "depth": 2})
    sup.history["/t/parent.jsonl"] = [{"role": "user", "content": "hi"}]
    sup.books.pool.taken[1].end("kid done")  # during the parent's last turn: its notice waits unread
    await settle()
    assert await sup.watcher.mailbox.pending("parent") == 1
    sup.books.pool.taken[0].end()
    await settle()
    assert (await sup.record("parent")).live and len(sup.books.pool.taken) == 3


# --- watch outcomes ---------------------------------------------------------------

async def test_an_actor_that_dies_fails_its_record_notifies_once_and_cleans_its_worktree(sup):
    worktree = Worktree(path="/tmp/wt", branch="covey/child", original_head="abc123", repo_root="/tmp", cwd="/tmp/wt")
    await _launch(sup, worktree=worktree)
    actor = sup.books.pool.taken[0]
    actor.die()
    await settle()
    record = await sup.record("child")
    assert record.status == "failed" and record.report.text.startswith("The agent's actor died: actor 'actor' is gone")
    assert sup.kept == [worktree] and record.worktree["kept"] is True
    assert len(_notices(sup)) == 1 and actor.killed and sup.books.pool.given_back == []


async def test_a_background_start_that_fails_ends_failed_with_its_notice(sup):
    await _launch(sup)
    sup.books.pool.taken[0].die(RuntimeError("this agent actor does not hold session runtime k"))
    await settle()
    record = await sup.record("child")
    assert record.status == "failed" and record.report.text.startswith("The agent could not be started:")
    assert len(_notices(sup)) == 1 and sup.books.pool.taken[0].killed


async def test_a_killed_agent_is_notified_once_with_the_kill_as_its_cause(sup):
    await _launch(sup)
    assert await sup.kill_agent("child", reason="stopped by the user")
    await settle()
    record = await sup.record("child")
    assert record.status == "killed" and record.report.text == "stopped by the user"
    assert len(_notices(sup)) == 1 and sup.books.pool.taken[0].cancels == [("killed", "stopped by the user", "child")]
    assert not await sup.kill_agent("child")  # ended: nothing to kill
    assert sup.books.core.claim_notification("child") is None  # claimed once


async def test_report_of_waits_for_the_watch_to_record_the_end(sup):
    await _launch(sup, follow=True)
    asking = asyncio.ensure_future(sup.report_of("child", timeout_s=5))
    await settle()
    assert not asking.done()
    sup.books.pool.taken[0].end("late")
    assert (await asking).text == "late"
    assert await sup.report_of("nobody", timeout_s=0) is None


# --- orphans and teams ----------------------------------------------------------

async def test_an_agent_that_ends_before_its_background_children_forwards_their_notices_to_main(sup):
    await _launch(sup, "parent")
    await _launch(sup, "kid", req={"parent": "parent", "depth": 2})
    sup.books.pool.taken[0].end()
    await settle()
    await sup.watcher.mailbox.put("parent", TaskNotice(task_id="kid", status="completed", text="kid done", key="kid#0"))
    assert [n.task_id for n in _notices(sup)] == ["parent", "kid"] and _notices(sup, "parent") == []
    sup.books.pool.taken[1].end(delivered_at=1.0)
    await settle()
    assert len(_notices(sup)) == 2


class _Board:
    def __init__(self) -> None:
        self.released: list[str] = []

    async def release_owner(self, member: str) -> list[Task]:
        self.released.append(member)
        return [Task(id="3", subject="write the parser", description="")]


class _Roster:
    def __init__(self) -> None:
        self.removed: list[str] = []

    async def remove(self, agent_id: str) -> None:
        self.removed.append(agent_id)


async def test_a_teammate_that_ends_releases_its_tasks_and_leaves_the_roster(sup):
    board, roster = _Board(), _Roster()
    team = {"name": "alpha", "member": "amy", "roster": roster, "board": board}
    await _launch(sup, "amy-id", team=team, req={"spawns_teammate": True, "member_name": "amy"})
    sup.books.pool.taken[0].end()
    await settle()
    assert board.released == ["amy"] and roster.removed == ["amy-id"]
    [notice] = _notices(sup)
    assert "#3 write the parser" in (text := render_notice(notice)) and "back to pending" in text


# --- stopping -------------------------------------------------------------------

async def test_the_watchdog_stops_an_agent_silent_past_the_stall_limit(sup):
    await _launch(sup, "quiet")
    await _launch(sup, "busy")
    await sup.progress("busy", tools_in_flight=["Bash"])
    sup.books.core.clock.advance(0.5)
    assert sup.stopper.stop_stalled() == []
    sup.books.core.clock.advance(0.6)
    assert sup.stopper.stop_stalled() == ["quiet"]
    await settle()
    record = await sup.record("quiet")
    assert record.status == "failed" and record.report.text == "stalled: no message or tool progress for 1000 ms"
    assert (await sup.record("busy")).live


async def test_stop_all_stops_every_running_agent_and_returns_the_worktrees_kept(sup):
    await _launch(sup, "a")
    await _launch(sup, "b", follow=True)
    await _launch(sup, "done")
    sup.books.pool.taken[2].end()
    sup.books.pool.taken[0].cancel_worktree = {"path": "/tmp/wt-a", "branch": "agent-a", "kept": True}
    await settle()
    kept = await sup.stop_all("the run was interrupted", grace_s=5)
    assert kept == [{"path": "/tmp/wt-a", "branch": "agent-a", "kept": True}]
    statuses = {r.agent_id: r.status for r in await sup.records()}
    assert statuses == {"main": "running", "a": "killed", "b": "killed", "done": "completed"}
    assert [actor.cancels for actor in sup.books.pool.taken] == [
        [("killed", "the run was interrupted", "a")], [("killed", "the run was interrupted", "b")], []]
    assert await sup.wait_idle(0) and (await sup.held())["watches"] == 0
