"""A call a PreToolUse hook defers (``permissionDecision: "defer"``): the run ends on it, unanswered,
and a resumed session settles it before anything else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from covey.events import ResultEvent, UserEvent
from covey.hooks.command import HookAnswer
from covey.hooks.outcomes import combine_pre_tool
from covey.hooks.runner import HookRegistry
from covey.hooks.tool_gate import DEFERRED, hook_gate
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.loop.steps import pending_calls, settled
from covey.model.scripted import ScriptedModel
from covey.transcripts.transcript import TranscriptWriter, rebuild_history
from covey.transcripts.transcript_read import deferred_record
from tests.loop.test_loop import SlowInput, SlowWrite, Timeline, _call


class Deferring(HookRegistry):
    """PreToolUse says ``defer`` for the labels given, nothing for the rest."""

    def __init__(self, labels: set[str]) -> None:
        super().__init__({}, project_dir=".")
        self.labels = labels

    async def run_pre_tool_use(self, agent_id: str, tool_name: str, tool_input: dict[str, Any], **kw: Any) -> Any:
        decision = "defer" if tool_input.get("label") in self.labels else None
        return combine_pre_tool([HookAnswer("test", permission_decision=decision)])


def _loop(turns: list[Any], hooks: HookRegistry, timeline: Timeline) -> AgentLoop:
    from covey.tools.base import ToolContext

    executor = ToolExecutor([SlowWrite(timeline)], ToolContext(agent_id="a", cwd=Path(".")), gate=hook_gate(hooks))
    return AgentLoop(model=ScriptedModel.from_turns(turns), executor=executor, deferred=hooks.take_deferred,
                     config=LoopConfig(model_id="m", system=[{"type": "text", "text": "sys"}], max_turns=5))


async def test_a_lone_deferred_call_ends_the_run_unanswered_and_unrun():
    timeline, hooks = Timeline(), Deferring({"later"})
    loop = _loop([{"tool_use": [_call("SlowWrite", "later")]}, {"text": "never asked"}], hooks, timeline)

    events = [e async for e in loop.run([{"role": "user", "content": "go"}])]

    [result] = [e for e in events if isinstance(e, ResultEvent)]
    call = loop.messages[-1]["content"][0]
    assert (result.subtype, result.is_error, result.result) == ("success", False, "")
    assert (result.stop_reason, result.terminal_reason) == ("tool_deferred", "tool_deferred")
    assert result.deferred_tool_use == {"id": call["id"], "name": "SlowWrite", "input": {"label": "later"}}
    assert timeline.spans == {} and not any(isinstance(e, UserEvent) for e in events)
    assert pending_calls(loop.messages)[0].id == call["id"]  # the history ends on the call


async def test_a_deferred_call_beside_another_is_answered_as_not_run_and_the_run_goes_on():
    timeline, hooks = Timeline(), Deferring({"later"})
    turns = [{"tool_use": [_call("SlowWrite", "now"), _call("SlowWrite", "later")]}, {"text": "done"}]
    loop = _loop(turns, hooks, timeline)

    events = [e async for e in loop.run([{"role": "user", "content": "go"}])]

    assert events[-1].result == "done" and events[-1].deferred_tool_use is None
    results = {b["tool_use_id"]: b for b in loop.messages[2]["content"]}
    later = loop.messages[1]["content"][1]["id"]
    assert results[later]["is_error"] and DEFERRED in results[later]["content"]
    assert set(timeline.spans) == {"now"}


async def test_a_resumed_conversation_that_ends_on_a_call_runs_it_first():
    timeline = Timeline()
    loop = _loop([{"text": "it ran"}], Deferring(set()), timeline)
    history = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "SlowWrite",
                                                  "input": {"label": "resumed"}}]}]

    events = [e async for e in loop.run(history)]

    assert set(timeline.spans) == {"resumed"} and events[-1].result == "it ran"
    assert loop.messages[2]["content"][0]["tool_use_id"] == "toolu_1"


async def test_the_transcript_keeps_a_deferred_call_for_resume_and_drops_one_cut_off(tmp_path):
    call = {"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": "true"}}
    for deferred in (True, False):
        writer = TranscriptWriter(tmp_path / f"{deferred}.jsonl", session_id="s", agent_id="a")
        await writer.append("user", {"role": "user", "content": "go"})
        await writer.append("assistant", {"role": "assistant", "content": [{"type": "text", "text": "ok"}, call]})
        if deferred:
            await writer.append("attachment", None, attachment=deferred_record({"id": "toolu_9", "name": "Bash"}))
        writer.close()
        history = rebuild_history(tmp_path / f"{deferred}.jsonl")
        assert (call in history[-1]["content"]) is deferred, json.dumps(history)
    history = rebuild_history(tmp_path / "True.jsonl")
    assert settled(history)[-1]["content"] == [{"type": "text", "text": "ok"}]  # a prompt instead passes it over


def test_defer_is_stricter_than_ask_and_looser_than_deny():
    def strictest(*decisions: str) -> str | None:
        return combine_pre_tool([HookAnswer("h", permission_decision=d) for d in decisions]).permission_decision  # type: ignore[arg-type]

    assert strictest("allow", "defer", "ask") == "defer" and strictest("defer", "deny") == "deny"
