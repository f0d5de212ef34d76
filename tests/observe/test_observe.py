"""Seeing what agents do: the trace file, the live tree, and inspecting a running session."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys

import pytest
import ray

from covey.cli import inspect
from covey.events import TaskStarted
from covey.observe.live import LiveView, tree_lines
from covey.observe.trace import LANES, write_trace
from covey.session import Session
from tests.session.scripts import CHILD, MAIN, agent_call, rule, scripted

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_session")]


def _three_children():
    calls = [agent_call(f"job {i}", background=True, description=f"job {i}") for i in range(3)]
    return scripted(
        rule({**CHILD, "last_tool_result_contains": "Todo list saved"}, {"text": "child done"}),
        rule(CHILD, {"tool_use": {"name": "TodoWrite", "input": {"todos": [
            {"content": "look", "status": "in_progress", "activeForm": "Looking"}]}}}, latency_s=0.05),
        rule({**MAIN, "last_message_contains": "<task-notification>"}, {"text": "all done"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": calls}),
    )


@pytest.mark.usefixtures("served_kits")  # borrows pooled actors (the ps test below keeps its own: ps names them)
async def test_a_trace_of_a_run_with_three_children_has_one_track_per_agent_and_nested_spans(tmp_path):
    (tmp_path / "p").mkdir()
    session = Session(cwd=str(tmp_path / "p"), model=_three_children(), pool_size=4, max_turns=8,
                      transcript_dir=str(tmp_path / "t"))
    try:
        await asyncio.wait_for(session.run("go"), 120)
        path = write_trace(tmp_path / "trace.json", await session.runtime.registry.records())
    finally:
        session.close()
    trace = json.loads(path.read_text())["traceEvents"]
    tracks = {e["tid"]: e["args"]["name"] for e in trace if e["ph"] == "M" and e["name"] == "thread_name"
              and e["tid"] < LANES}  # an agent's own track; its lanes hold the calls it ran side by side
    assert len(tracks) == 4 and sum(name.startswith("general-purpose") for name in tracks.values()) == 3
    for tid in tracks:
        spans = [e for e in trace if e["ph"] == "X" and tid in (e["tid"], e["tid"] // LANES)]
        (agent,) = [s for s in spans if s["cat"] == "agent"]
        inner = [s for s in spans if s["cat"] != "agent"]
        assert any(s["cat"] == "model" for s in inner)
        for span in inner:  # nested: every inner span lies inside its agent's span
            assert agent["ts"] <= span["ts"] and span["ts"] + span["dur"] <= agent["ts"] + agent["dur"]
    assert any(e["cat"] == "tool" and e["name"] == "TodoWrite" for e in trace if e["ph"] == "X")
    arrows = [e for e in trace if e["ph"] == "f"]  # one from each Agent call to its child's span
    assert len(arrows) == 3 and {e["tid"] for e in arrows} == {tid for tid, n in tracks.items() if n.startswith("general")}


async def test_live_view_prints_status_changes_when_not_on_a_terminal():
    trees = iter([
        {"agent_id": "agent-1", "type": "main", "status": "running", "description": "main agent", "turns": 1,
         "subtree_tokens": 10, "subtree_cost_usd": 0.0, "children": []},
        {"agent_id": "agent-1", "type": "main", "status": "running", "description": "main agent", "turns": 2,
         "subtree_tokens": 1500, "subtree_cost_usd": 0.01, "current_tools": ["Agent"], "children": [
             {"agent_id": "agent-2", "type": "Explore", "status": "completed", "description": "look", "turns": 1,
              "subtree_tokens": 5, "subtree_cost_usd": 0.0, "children": []}]},
    ])

    async def get_tree():
        return next(trees)

    out = io.StringIO()
    view = LiveView(get_tree, stream=out)
    await view.refresh()
    await view.refresh()
    assert out.getvalue().splitlines() == [
        "covey: main agent-1 running: main agent",
        "covey: Explore agent-2 completed: look",
    ]
    lines = tree_lines({"agent_id": "agent-1", "type": "main", "status": "running", "turns": 2,
                        "subtree_tokens": 1500, "subtree_cost_usd": 0.01, "current_tools": ["Agent"], "children": []})
    assert "1.5k tok" in lines[0] and "▸ Agent" in lines[0]


async def _listing_with(*texts: str, timeout_s: float = 30.0) -> str:
    """``covey ps``'s listing once it shows every one of ``texts`` (polled; fails after ``timeout_s``)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        listing = await inspect.ps_text()
        if all(text in listing for text in texts):
            return listing
        assert asyncio.get_running_loop().time() < deadline, listing
        await asyncio.sleep(0.1)


async def test_ps_tree_kill_and_team_see_a_running_session(tmp_path):
    model = scripted(
        rule(CHILD, {"text": "late"}, latency_s=60),
        rule({**MAIN, "last_message_contains": "<task-notification>"}, {"text": "saw the kill"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": agent_call("slow job", background=True, description="slow job")}),
    )
    (tmp_path / "p").mkdir()
    session = Session(cwd=str(tmp_path / "p"), model=model, pool_size=2, max_turns=6, transcript_dir=str(tmp_path / "t"))
    events = []
    try:
        async for event in session.stream("go"):
            events.append(event)
            if isinstance(event, TaskStarted):
                await _listing_with(session.session_id[:8], "slow job")  # it lists the session and its child
                prefix = session.session_id[:8]
                tree = await inspect.tree_text(prefix, (await inspect.running_sessions())[prefix])
                assert "general-purpose" in tree and "running" in tree
                env = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address}
                done = subprocess.run([sys.executable, "-m", "covey", "ps"], env=env, capture_output=True,
                                      text=True, timeout=60)
                assert event.task_id in done.stdout, done.stderr
                assert "killed" in await inspect.kill(event.task_id)
    finally:
        session.close()
    assert events[-1].result == "saw the kill"


def test_a_live_view_draws_on_the_stderr_of_when_it_is_made(monkeypatch):
    """Not the one of when covey.observe.live was imported (a test's capture, since closed)."""
    now = io.StringIO()
    monkeypatch.setattr(sys, "stderr", now)
    assert LiveView(None).stream is now
