"""A long tool call's heartbeat: while a tool that asks for one runs, a ``tool_progress`` event
(``heartbeat: true``, the seconds so far, the call's description and child type) every
``heartbeat_s``, as Claude Code sends during an Agent call; none after the call ends, none for
other tools."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from covey.events import ToolProgress
from covey.loop.execute import ToolExecutor
from covey.loop.heartbeat import every_s
from covey.model.messages import ToolUseBlock
from covey.subagents.agent_tool import AgentTool
from covey.tools.base import Tool, ToolContext, ToolResult, ToolServices


class _Input(BaseModel):
    description: str = ""
    subagent_type: str = ""
    seconds: float = 0.0


class _Slow(Tool):
    name = "Slow"
    description = "sleeps"
    input_model = _Input
    heartbeat_s: ClassVar[float | None] = 0.05

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(input.seconds)
        return ToolResult(content="done")


class _Quiet(_Slow):
    name = "Quiet"
    heartbeat_s: ClassVar[float | None] = None


def _executor(events: list[Any], tmp_path: Path) -> ToolExecutor:
    ctx = ToolContext(agent_id="main", cwd=tmp_path, emit=events.append, services=ToolServices(session_id="s-1"))
    return ToolExecutor([_Slow(), _Quiet()], ctx)


async def test_a_long_call_beats_with_its_description_and_stops_when_it_ends(tmp_path):
    events: list[Any] = []
    call = ToolUseBlock(id="toolu_1", name="Slow", input={"description": "Survey the repo", "subagent_type": "Explore",
                                                          "seconds": 0.28})
    block = await _executor(events, tmp_path).run_one(call)
    assert block["content"] == "done"
    beats = [event.wire() for event in events]
    assert 4 <= len(beats) <= 6, beats
    assert all(isinstance(event, ToolProgress) for event in events)
    first = beats[0]
    assert first["type"] == "tool_progress" and first["heartbeat"] is True and first["session_id"] == "s-1"
    assert (first["tool_use_id"], first["tool_name"], first["parent_tool_use_id"]) == ("toolu_1", "Slow", None)
    assert (first["description"], first["subagent_type"]) == ("Survey the repo", "Explore")
    assert [beat["elapsed_time_seconds"] for beat in beats] == sorted(beat["elapsed_time_seconds"] for beat in beats)
    await asyncio.sleep(0.15)
    assert len(events) == len(beats)  # nothing after the call's end


async def test_a_tool_without_a_heartbeat_or_a_short_call_sends_none(tmp_path):
    events: list[Any] = []
    executor = _executor(events, tmp_path)
    await executor.run_one(ToolUseBlock(id="toolu_2", name="Quiet", input={"seconds": 0.2}))
    await executor.run_one(ToolUseBlock(id="toolu_3", name="Slow", input={"seconds": 0.01}))
    assert events == []


def test_the_agent_tool_beats_every_thirty_seconds_as_claude_code():
    assert AgentTool.heartbeat_s == 30.0


def test_the_interval_is_the_tools_own_unless_the_run_sets_one():
    assert AgentTool.heartbeat_s == 30.0  # Claude Code's
    assert every_s(30.0, {}) == 30.0
    assert every_s(30.0, {"COVEY_TOOL_HEARTBEAT_MS": "1500"}) == 1.5
    assert every_s(30.0, {"COVEY_TOOL_HEARTBEAT_MS": "soon"}) == 30.0  # not a number: the tool's own
    assert every_s(30.0, {"COVEY_TOOL_HEARTBEAT_MS": "1"}) == 0.05  # never a busy loop
    assert every_s(None, {"COVEY_TOOL_HEARTBEAT_MS": "1500"}) is None  # a tool with no heartbeat has none
