"""Teams end to end: roster, task board and mailbox actors, teammates that claim work."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import ray

from covey.events import TaskNotification
from covey.ray.cluster import NAMESPACE
from covey.session import Session
from covey.teams.team_actors import BoardHandle
from tests.session.scripts import CHILD, MAIN, main_texts, rule, scripted

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors

TASKS = 10
BLOCKED_BY = {"2": ["1"], "4": ["3"], "5": ["4"], "7": ["1", "6"], "10": ["9", "8"]}


def _call(tool, **input):
    return {"name": tool, "input": input}


def _lead_rules():
    creates = [_call("TaskCreate", subject=f"task {i}", description=f"do part {i}") for i in range(1, TASKS + 1)]
    links = [_call("TaskUpdate", taskId=task, addBlockedBy=blockers) for task, blockers in BLOCKED_BY.items()]
    spawns = [_call("Agent", description=f"teammate {n}", prompt="You are on the crew. Say ready.",
                    name=n, team_name="crew") for n in ("amy", "bob", "cat")]
    return [
        rule({**MAIN, "last_message_contains": "<task-notification>"}, {"text": "the crew is done"}),
        rule({**MAIN, "last_tool_result_contains": "joined team"}, {"text": "waiting for the crew"}),
        rule({**MAIN, "last_tool_result_contains": "Updated task #2"}, {"tool_use": spawns}),
        rule({**MAIN, "last_tool_result_contains": f"Task #{TASKS} created"}, {"tool_use": links}),
        rule({**MAIN, "last_tool_result_contains": "created with an empty task board"}, {"tool_use": creates}),
        rule(MAIN, {"tool_use": _call("TeamCreate", team_name="crew")}),
    ]


def _mate_rules():
    rules = [rule({**CHILD, "last_tool_result_contains": "It is completed"}, {"text": "finished my task"})]
    for i in range(1, TASKS + 1):
        rules.append(rule({**CHILD, "last_message_contains": f"You claimed task #{i}:"},
                          {"tool_use": _call("TaskUpdate", taskId=str(i), status="completed")}))
    rules.append(rule(CHILD, {"text": "ready"}))
    return rules


async def test_a_lead_and_three_teammates_finish_every_task_once_and_never_before_its_blockers(tmp_path):
    model = scripted(*_lead_rules(), *_mate_rules(), latency_s=0.05)
    (tmp_path / "proj").mkdir()
    session = Session(cwd=str(tmp_path / "proj"), model=model, teams=True, pool_size=4, max_turns=40,
                      transcript_dir=str(tmp_path / "t"))
    try:
        result = await asyncio.wait_for(session.run("Split the work across a crew."), 240)
        board = BoardHandle(ray.get_actor(f"{session.session_id[:8]}/team/crew/board", namespace=NAMESPACE))
        tasks = await board.list()
        records = await session.runtime.registry.records()
    finally:
        session.close()
    assert result.result == "the crew is done", result.result
    assert len(tasks) == TASKS and all(t.status == "completed" for t in tasks)
    assert {t.owner for t in tasks} <= {"amy", "bob", "cat"}
    mates = [r for r in records if r.role == "teammate"]
    assert sorted(r.member_name for r in mates) == ["amy", "bob", "cat"]

    claims, done_at = {}, {}
    for mate in mates:
        for line in Path(mate.output_file).read_text().splitlines():
            record = json.loads(line)
            text = json.dumps(record["message"])
            for i in range(1, TASKS + 1):
                if f"You claimed task #{i}:" in text:
                    claims[str(i)] = claims.get(str(i), 0) + 1
                    done_at.setdefault(str(i), record["timestamp"])
    assert claims == {str(i): 1 for i in range(1, TASKS + 1)}  # every task claimed exactly once
    for task, blockers in BLOCKED_BY.items():
        for blocker in blockers:
            assert done_at[blocker] < done_at[task], f"task {task} was claimed before its blocker {blocker}"


async def test_a_killed_teammate_gives_its_task_back_and_another_teammate_finishes_it(tmp_path):
    spawn = lambda who: _call("Agent", description=f"teammate {who}", prompt=f"You are {who}.", name=who, team_name="crew")  # noqa: E731
    model = scripted(
        rule({**MAIN, "last_message_contains": 'teammate bob" finished'}, {"text": "bob finished it"}),
        rule({**MAIN, "last_message_contains": "back to pending"}, {"tool_use": spawn("bob")}),
        rule({**MAIN, "last_tool_result_contains": "joined team"}, {"text": "waiting"}),
        rule({**MAIN, "last_tool_result_contains": "Task #1 created"}, {"tool_use": spawn("amy")}),
        rule({**MAIN, "last_tool_result_contains": "created with an empty task board"},
             {"tool_use": _call("TaskCreate", subject="the job", description="do it")}),
        rule(MAIN, {"tool_use": _call("TeamCreate", team_name="crew")}),
        rule({**CHILD, "messages_contain": "You are amy.", "last_message_contains": "You claimed task #1:"},
             {"text": "working very slowly"}, latency_s=60),
        rule({**CHILD, "last_message_contains": "You claimed task #1:"},
             {"tool_use": _call("TaskUpdate", taskId="1", status="completed")}),
        rule({**CHILD, "last_tool_result_contains": "It is completed"}, {"text": "done"}),
        rule(CHILD, {"text": "ready"}),
    )
    (tmp_path / "proj").mkdir()
    session = Session(cwd=str(tmp_path / "proj"), model=model, teams=True, pool_size=3, max_turns=20,
                      transcript_dir=str(tmp_path / "t"))
    events = []

    async def consume():
        async for event in session.stream("go"):
            events.append(event)

    try:
        runner = asyncio.create_task(consume())
        board = None
        for _ in range(300):
            await asyncio.sleep(0.1)
            try:
                board = board or BoardHandle(ray.get_actor(f"{session.session_id[:8]}/team/crew/board", namespace=NAMESPACE))
            except ValueError:
                continue
            tasks = await board.list()
            if tasks and tasks[0].owner == "amy" and tasks[0].status == "in_progress":
                break
        amy = await session.runtime.registry.find("amy")
        (await session.runtime.registry.actor_of(amy.agent_id)).kill()
        await asyncio.wait_for(runner, 120)
        (task,) = await board.list()
        records = {r.member_name: r for r in await session.runtime.registry.records() if r.member_name}
    finally:
        session.close()
    assert records["amy"].status == "failed"
    assert task.status == "completed" and task.owner == "bob"
    notices = [text for text in main_texts(session, tmp_path / "t") if "back to pending" in text]
    assert len(notices) == 1 and "#1 the job" in notices[0]
    assert events[-1].result == "bob finished it"


async def test_mail_that_arrives_during_a_childs_last_turn_resumes_it_and_is_not_lost(tmp_path):
    """A leaf child ends without a last look at its mailbox; the registry sees the mail and resumes it."""
    model = scripted(
        rule({**MAIN, "last_message_contains": "SECOND_REPORT"}, {"text": "got both reports"}),
        rule({**MAIN, "last_message_contains": "FIRST_REPORT"}, {"text": "waiting for the second"}),
        rule({**MAIN, "last_tool_result_contains": "Queued for"}, {"text": "waiting"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"},
             {"tool_use": _call("SendMessage", to="scout", message="ONE_MORE_THING")}),
        rule(MAIN, {"tool_use": _call("Agent", description="scout around", prompt="look around", name="scout",
                                      run_in_background=True)}),
        rule({**CHILD, "last_message_contains": "ONE_MORE_THING"}, {"text": "SECOND_REPORT"}),
        rule(CHILD, {"text": "FIRST_REPORT"}, latency_s=1.5),  # the message is sent during this turn
    )
    (tmp_path / "proj").mkdir()
    session = Session(cwd=str(tmp_path / "proj"), model=model, teams=True, pool_size=2, max_turns=12,
                      transcript_dir=str(tmp_path / "t"))
    try:
        result = await asyncio.wait_for(session.run("go"), 120)
        scout = await session.runtime.registry.find("scout")
        pending = await session.runtime.mailbox.pending(scout.agent_id)
    finally:
        session.close()
    assert result.result == "got both reports"
    assert scout.notifications == 2 and scout.status == "completed" and pending == 0
    lines = [json.loads(line) for line in Path(scout.output_file).read_text().splitlines()]
    assert "ONE_MORE_THING" in json.dumps(lines[-2]) and "SECOND_REPORT" in json.dumps(lines[-1])


async def test_a_completed_named_agent_resumes_on_a_message_and_notifies_again_under_the_same_id(tmp_path):
    model = scripted(
        rule({**MAIN, "last_message_contains": "SECOND_REPORT"}, {"text": "got both reports"}),
        rule({**MAIN, "last_tool_result_contains": "Queued for"}, {"text": "waiting again"}),
        rule({**MAIN, "last_message_contains": "FIRST_REPORT"},
             {"tool_use": _call("SendMessage", to="scout", message="ONE_MORE_THING")}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": _call("Agent", description="scout around", prompt="look around", name="scout",
                                      run_in_background=True)}),
        rule({**CHILD, "last_message_contains": "ONE_MORE_THING"}, {"text": "SECOND_REPORT"}),
        rule(CHILD, {"text": "FIRST_REPORT"}),
    )
    (tmp_path / "proj").mkdir()
    session = Session(cwd=str(tmp_path / "proj"), model=model, teams=True, pool_size=2, max_turns=12,
                      transcript_dir=str(tmp_path / "t"))
    try:
        result = await asyncio.wait_for(session.run("go"), 120)
        scout = await session.runtime.registry.find("scout")
    finally:
        session.close()
    notices = [e for e in result.events if isinstance(e, TaskNotification)]
    assert [n.task_id for n in notices] == [scout.agent_id, scout.agent_id]
    assert scout.notifications == 2 and scout.status == "completed"
    assert result.result == "got both reports"
    lines = [json.loads(line) for line in Path(scout.output_file).read_text().splitlines()]
    assert "ONE_MORE_THING" in json.dumps(lines[-2]) and "SECOND_REPORT" in json.dumps(lines[-1])
