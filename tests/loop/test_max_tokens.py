"""A reply cut off at ``max_tokens`` continues instead of ending the run (docs/compaction.md#max-tokens)."""

from __future__ import annotations

from pathlib import Path

from covey.events import ResultEvent, UserEvent
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.loop.run import CONTINUATIONS, CUT_CALL, GO_ON
from covey.model.scripted import ScriptedModel
from covey.tools.base import ToolContext
from tests.loop.test_compact import Echo


def _loop(turns):
    ctx = ToolContext(agent_id="agent-test", cwd=Path("."))
    return AgentLoop(model=ScriptedModel.from_turns(turns), executor=ToolExecutor([Echo()], ctx),
                     config=LoopConfig(model_id="m", system=[{"type": "text", "text": "sys"}], max_turns=10))


async def _run(loop):
    return [event async for event in loop.run([{"role": "user", "content": "write a long answer"}])]


async def test_a_cut_off_reply_is_continued_and_the_run_succeeds():
    loop = _loop([{"text": "The first half", "stop_reason": "max_tokens"}, {"text": "and the second half."}])
    events = await _run(loop)
    result = events[-1]
    assert isinstance(result, ResultEvent) and not result.is_error and result.result == "and the second half."
    follow_up = loop.model.requests[1].messages
    assert follow_up[-2]["content"][0]["text"] == "The first half"  # the cut reply stays in the history
    assert follow_up[-1]["content"][-1]["text"] == GO_ON
    assert any(isinstance(e, UserEvent) and e.message["content"][-1]["text"] == GO_ON for e in events)


async def test_a_tool_call_in_a_cut_reply_is_answered_not_run():
    cut = {"text": "Let me", "tool_use": {"name": "Echo", "input": {"text": "half"}}, "stop_reason": "max_tokens"}
    loop = _loop([cut, {"text": "done"}])
    events = await _run(loop)
    answer = loop.model.requests[1].messages[-1]["content"]
    assert answer[0]["type"] == "tool_result" and answer[0]["is_error"] and answer[0]["content"] == CUT_CALL
    assert "echo: half" not in str(loop.messages)
    assert events[-1].result == "done"


async def test_the_run_ends_after_too_many_cut_offs_in_a_row():
    cut = {"text": "more", "stop_reason": "max_tokens"}
    loop = _loop([cut] * (CONTINUATIONS + 1))
    events = await _run(loop)
    result = events[-1]
    assert result.is_error and result.stop_reason == "max_tokens"
    assert any("max_tokens" in error for error in result.errors)
    assert len(loop.model.requests) == CONTINUATIONS + 1


async def test_the_count_starts_again_after_a_whole_reply():
    cut = {"text": "more", "stop_reason": "max_tokens"}
    call = {"tool_use": {"name": "Echo", "input": {"text": "x"}}}
    loop = _loop([cut] * CONTINUATIONS + [call] + [cut] * CONTINUATIONS + [{"text": "done"}])
    assert (await _run(loop))[-1].result == "done"
