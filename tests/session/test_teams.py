"""Teams end to end: roster, task board and mailbox actors, teammates that claim work (SPEC 13)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import ray

from covey.actors.team import BoardHandle
from covey.events import UserEvent
from covey.ray_runtime import NAMESPACE
from covey.session import Session
from tests.session.scripts import CHILD, MAIN, rule, scripted

pytestmark = pytest.mark.usefixtures("ray_session")

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
