"""OpenTelemetry spans of a fan-out on Ray: every agent runs in an actor of its own and exports
through the standard OTLP variables to a collector on loopback (this test's), and the span tree
it receives is one trace with each child's ``invoke_agent`` under its parent's Agent call."""

from __future__ import annotations

import asyncio
import time

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from covey.session import Session
from tests.otlp_collector import check_tree, collector
from tests.session.scripts import CHILD, MAIN, agent_call, rule, scripted

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_session")]


@pytest.fixture
def spans(monkeypatch):
    with collector() as server:
        for name, value in server.variables().items():
            monkeypatch.setenv(name, value)
        yield server.spans


def _fan_out():
    """The main agent launches A and B together; A launches a grandchild."""
    return scripted(
        rule({**CHILD, "messages_contain": "TASK-A", "last_tool_result_contains": "grand done"}, {"text": "a done"}),
        rule({**CHILD, "messages_contain": "TASK-A"}, {"tool_use": agent_call("GRAND-TASK", background=False)}),
        rule({**CHILD, "messages_contain": "GRAND-TASK"}, {"text": "grand done"}),
        rule({**CHILD, "messages_contain": "TASK-B"}, {"text": "b done"}),
        rule({**MAIN, "last_message_contains": "b done"}, {"text": "all done"}),
        rule(MAIN, {"tool_use": [agent_call("TASK-A", background=False, description="a"),
                                 agent_call("TASK-B", background=False, description="b")]}),
    )


async def test_a_fan_out_on_ray_is_one_trace_with_each_child_under_its_agent_call(tmp_path, spans):
    (tmp_path / "p").mkdir()
    session = Session(cwd=str(tmp_path / "p"), model=_fan_out(), pool_size=4, max_turns=8,
                      transcript_dir=str(tmp_path / "t"))
    try:
        result = await asyncio.wait_for(session.run("go"), 120)
    finally:
        session.close()
    assert "all done" in str(result)
    deadline = time.monotonic() + 20
    while sum(s["gen_ai.operation.name"] == "invoke_agent" for s in spans) < 4 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    runs = check_tree(spans, agents=4)
    by_id = {s["id"]: s for s in spans}
    assert sorted(s["covey.agent.depth"] for s in runs.values()) == [0, 1, 1, 2]
    grand = next(s for s in runs.values() if s["covey.agent.depth"] == 2)
    assert by_id[by_id[grand["parent"]]["parent"]]["covey.agent.depth"] == 1  # under a child's call, not the main's
    first, second = sorted((s for s in spans if s["name"] == "execute_tool Agent"
                            and by_id[s["parent"]]["covey.agent.depth"] == 0), key=lambda s: s["start_ns"])
    assert second["start_ns"] < first["end_ns"]  # the main agent's two Agent calls ran side by side
