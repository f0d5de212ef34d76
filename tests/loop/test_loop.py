"""The agent loop's rules, driven without Ray through the scripted model."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import ClassVar

import pytest

from covey.errors import ModelAPIError
from covey.events import AssistantEvent, PermissionDenied, ResultEvent, UserEvent
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.loop.gate import PermissionGate
from covey.model.scripted import ScriptedModel
from covey.permissions.policy import PermissionPolicy
from covey.permissions.rules import parse_rule
from covey.teams.render import SentPrompt
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult


class SlowInput(ToolInput):
    label: str


class Timeline:
    def __init__(self) -> None:
        self.spans: dict[str, tuple[float, float]] = {}


class SlowRead(Tool):
    name: ClassVar[str] = "SlowRead"
    description: ClassVar[str] = "waits, read-only"
    input_model = SlowInput
    read_only = True

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline

    async def run(self, input, ctx):
        start = time.monotonic()
        await asyncio.sleep(0.1)
        self.timeline.spans[input.label] = (start, time.monotonic())
        return ToolResult(content=f"read {input.label}")


class SlowWrite(SlowRead):
    name: ClassVar[str] = "SlowWrite"
    read_only = False


class Boom(Tool):
    name: ClassVar[str] = "Boom"
    description: ClassVar[str] = "always fails"
    input_model = SlowInput

    async def run(self, input, ctx):
        raise RuntimeError("kaput")


def _call(name, label, **extra):
    return {"name": name, "input": {"label": label, **extra}}


def _loop(turns, tools, *, max_turns=10, gate=None, inbox=None):
    ctx = ToolContext(agent_id="agent-test", cwd=Path("."))
    executor = ToolExecutor(tools, ctx, gate=gate)
    return AgentLoop(
        model=ScriptedModel.from_turns(turns),
        config=LoopConfig(model_id="m", system=[{"type": "text", "text": "sys"}], max_turns=max_turns),
        executor=executor,
        inbox=inbox,
    )


async def _events(loop, prompt="go"):
    return [e async for e in loop.run([{"role": "user", "content": prompt}])]


def _results(loop):
    """tool_use id -> tool_result block, over the whole history."""
    return {b["tool_use_id"]: b for m in loop.messages if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"}


def _tool_uses(loop):
    return [b for m in loop.messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]


async def test_read_only_calls_of_one_message_run_concurrently():
    timeline = Timeline()
    loop = _loop([{"tool_use": [_call("SlowRead", "a"), _call("SlowRead", "b")]}, {"text": "done"}], [SlowRead(timeline)])
    await _events(loop)
    (a0, a1), (b0, b1) = timeline.spans["a"], timeline.spans["b"]
    assert b0 < a1 and a0 < b1  # the spans overlap


async def test_other_calls_run_one_after_another_in_order():
    timeline = Timeline()
    loop = _loop([{"tool_use": [_call("SlowWrite", "a"), _call("SlowWrite", "b")]}, {"text": "done"}], [SlowWrite(timeline)])
    await _events(loop)
    assert timeline.spans["a"][1] <= timeline.spans["b"][0]


async def test_every_tool_use_gets_exactly_one_result_in_order():
    timeline = Timeline()
    calls = [_call("SlowRead", "a"), _call("SlowWrite", "b"), _call("SlowRead", "c"), _call("Nope", "d")]
    loop = _loop([{"tool_use": calls}, {"text": "done"}], [SlowRead(timeline), SlowWrite(timeline)])
    await _events(loop)
    uses = _tool_uses(loop)
    results_message = loop.messages[2]["content"]
    assert [b["tool_use_id"] for b in results_message] == [u["id"] for u in uses]


async def test_unknown_tool_invalid_input_and_exceptions_become_error_results():
    calls = [_call("Nope", "a"), {"name": "Boom", "input": {"wrong": 1}}, _call("Boom", "c")]
    loop = _loop([{"tool_use": calls}, {"text": "done"}], [Boom()])
    events = await _events(loop)
    unknown, invalid, raised = loop.messages[2]["content"]
    assert unknown["is_error"] and "No such tool: 'Nope'" in unknown["content"] and "Boom" in unknown["content"]
    assert invalid["is_error"] and "label" in invalid["content"] and "wrong" in invalid["content"]
    assert raised["is_error"] and "RuntimeError: kaput" in raised["content"]
    assert events[-1].subtype == "success" and events[-1].wire()["errors"] == []


async def test_max_turns_ends_the_run_with_a_clear_reason():
    timeline = Timeline()
    loop = _loop([{"tool_use": _call("SlowRead", str(i))} for i in range(5)], [SlowRead(timeline)], max_turns=2)
    events = await _events(loop)
    result = events[-1]
    assert isinstance(result, ResultEvent)
    assert result.subtype == "error_max_turns" and result.is_error and "turns (2)" in result.result
    assert result.num_turns == 2


async def test_a_model_api_error_ends_the_run_as_an_error_result():
    loop = _loop([ModelAPIError("overloaded after 4 retries", 529)], [])
    events = await _events(loop)
    assert events[-1].is_error and "overloaded" in events[-1].result
    assert events[-1].errors == [events[-1].result]  # Claude Code's error results list their causes


async def test_cancellation_closes_pending_tool_calls_with_error_results():
    class Hang(SlowRead):
        name: ClassVar[str] = "Hang"

        async def run(self, input, ctx):
            await asyncio.sleep(60)

    loop = _loop([{"tool_use": [_call("Hang", "a"), _call("Hang", "b")]}, {"text": "never"}], [Hang(Timeline())])
    task = asyncio.create_task(_events(loop))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    results = _results(loop)
    assert set(results) == {u["id"] for u in _tool_uses(loop)}
    assert all(r["is_error"] and "Interrupted" in r["content"] for r in results.values())


async def test_a_denied_call_is_an_error_result_and_is_reported():
    policy = PermissionPolicy(mode="default", deny=[parse_rule("SlowWrite", source="cliArg")], project_root=Path("."))
    gate = PermissionGate(policy)
    timeline = Timeline()
    loop = _loop([{"tool_use": _call("SlowWrite", "a")}, {"text": "done"}], [SlowWrite(timeline)], gate=gate)
    loop.denials = gate.denials
    events = await _events(loop)
    (block,) = loop.messages[2]["content"]
    assert block["is_error"] and "SlowWrite" in block["content"] and "cliArg" in block["content"]
    assert timeline.spans == {}
    assert events[-1].permission_denials[0]["tool_name"] == "SlowWrite"


async def test_events_stream_in_claude_code_shapes():
    timeline = Timeline()
    loop = _loop([{"tool_use": _call("SlowRead", "a")}, {"text": "done"}], [SlowRead(timeline)])
    events = await _events(loop)
    assert [type(e) for e in events] == [AssistantEvent, UserEvent, AssistantEvent, ResultEvent]
    wire = events[-1].wire()
    assert wire["type"] == "result" and wire["subtype"] == "success" and wire["result"] == "done"
    assert wire["num_turns"] == 2 and wire["usage"]["input_tokens"] > 0


class FakeInbox:
    def __init__(self, later: list[str]) -> None:
        self.later = later

    async def drain(self):
        return []

    async def outstanding(self):
        return bool(self.later)

    def owns_background(self):
        return True

    async def wait(self):
        await asyncio.sleep(0.01)
        texts, self.later = self.later, []
        return texts


async def test_a_final_answer_waits_for_background_notifications_and_takes_another_turn():
    loop = _loop([{"text": "launched"}, {"text": "got the report"}], [], inbox=FakeInbox(["<task-notification>x</task-notification>"]))
    events = await _events(loop)
    results = [e for e in events if isinstance(e, ResultEvent)]
    assert [r.result for r in results] == ["launched", "got the report"]
    assert loop.messages[-2]["role"] == "user"
    assert "<task-notification>" in loop.messages[-2]["content"][0]["text"]
    # The first is not the run's last (a notice may still start a turn): print mode holds it.
    assert [r.goes_on for r in results] == [True, False] and "goes_on" not in results[0].wire()


async def test_a_result_with_nothing_left_to_wake_the_run_is_its_last():
    loop = _loop([{"text": "done"}], [], inbox=FakeInbox([]))
    (result,) = [e for e in await _events(loop) if isinstance(e, ResultEvent)]
    assert result.goes_on is False


async def test_a_message_sent_after_a_final_answer_is_kept_as_the_string_sent():
    # The queued-message path (a prompt written right after a result, while the agent still ran):
    # its own user message, as sent, as Claude Code records a prompt (a truncating resume matches it).
    loop = _loop([{"text": "launched"}, {"text": "answered"}], [], inbox=FakeInbox([SentPrompt("NEXT please")]))
    events = await _events(loop)
    assert loop.messages[-2] == {"role": "user", "content": "NEXT please"}
    (taken,) = [e for e in events if isinstance(e, UserEvent)]
    assert taken.message == {"role": "user", "content": "NEXT please"} and taken.taken_mail
    assert "taken_mail" not in taken.wire()


async def test_a_message_sent_while_tools_ran_joins_their_results_as_a_text_block():
    tool_use = {"tool_use": {"name": "SlowRead", "input": {"label": "a"}}}
    inbox = CountingInbox([SentPrompt("ALSO this")])
    loop = _loop([tool_use, {"text": "done"}], [SlowRead(Timeline())], inbox=inbox)
    loop.config.mail_before_first_turn = False
    await _events(loop)
    assert loop.messages[2]["content"][-1] == {"type": "text", "text": "ALSO this"}


class CountingInbox(FakeInbox):
    def __init__(self, mail):
        super().__init__([])
        self.mail, self.drains = mail, 0

    async def drain(self):
        self.drains += 1
        texts, self.mail = self.mail, []
        return texts

    def owns_background(self):
        return False


async def test_a_fresh_agent_skips_the_inbox_before_its_first_turn_and_reads_it_before_the_next():
    tool_use = {"tool_use": {"name": "SlowRead", "input": {"label": "a"}}}
    inbox = CountingInbox(["NOTE_FROM_PARENT"])
    loop = _loop([tool_use, {"text": "done"}], [SlowRead(Timeline())], inbox=inbox)
    loop.config.mail_before_first_turn = False
    await _events(loop)
    first, second = loop.model.requests
    assert "NOTE_FROM_PARENT" not in str(first.messages) and "NOTE_FROM_PARENT" in str(second.messages)
    assert inbox.drains == 1  # before the second turn; none at the end (it owns no background work)

    resumed = CountingInbox(["WAKE_UP_MAIL"])
    loop = _loop([{"text": "done"}], [], inbox=resumed)  # the default: look before the first turn
    await _events(loop)
    assert "WAKE_UP_MAIL" in str(loop.model.requests[0].messages)


async def test_requests_mark_cache_breakpoints_without_writing_them_into_history():
    model = ScriptedModel.from_turns([{"text": "done"}])
    ctx = ToolContext(agent_id="a", cwd=Path("."))
    loop = AgentLoop(model=model, config=LoopConfig(model_id="m", system=[{"type": "text", "text": "s"}]),
                     executor=ToolExecutor([SlowRead(Timeline())], ctx))
    await _events(loop)
    request = model.requests[0]
    assert request.system[-1]["cache_control"] == {"type": "ephemeral"}
    assert request.tools[-1]["cache_control"] == {"type": "ephemeral"}
    assert request.messages[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in str(loop.messages)


async def test_each_result_counts_its_own_turn_and_the_run_s_api_time():
    loop = _loop([{"tool_use": _call("SlowRead", "a")}, {"text": "launched"}, {"text": "got it"}],
                 [SlowRead(Timeline())], inbox=FakeInbox(["<task-notification>x</task-notification>"]))
    first, second = [e for e in await _events(loop) if isinstance(e, ResultEvent)]
    assert (first.num_turns, second.num_turns) == (2, 1) and (first.result_index, second.result_index) == (0, 1)
    # Together the turns' tokens are the run's: none counted twice.
    assert first.usage["input_tokens"] + second.usage["input_tokens"] == loop.stats.usage.input_tokens
    assert 0 < second.usage["input_tokens"] < loop.stats.usage.input_tokens
    assert second.duration_api_ms >= first.duration_api_ms and first.stop_reason == "end_turn"


async def test_a_denial_is_announced_before_its_tool_result():
    policy = PermissionPolicy(mode="default", deny=[parse_rule("SlowWrite", source="cliArg")], project_root=Path("."))
    gate = PermissionGate(policy)
    loop = _loop([{"tool_use": _call("SlowWrite", "a")}, {"text": "done"}], [SlowWrite(Timeline())], gate=gate)
    loop.denials = gate.denials
    events = await _events(loop)
    denied, user = events[1], events[2]
    assert isinstance(denied, PermissionDenied) and isinstance(user, UserEvent)
    assert denied.tool_name == "SlowWrite" and denied.message == user.message["content"][0]["content"]
    assert user.tool_use_result == f"Error: {denied.message}"


async def test_max_turns_keeps_the_api_stop_reason_and_says_why_in_errors():
    loop = _loop([{"tool_use": _call("SlowRead", "a")}], [SlowRead(Timeline())], max_turns=1)
    result = (await _events(loop))[-1]
    assert result.subtype == "error_max_turns" and result.stop_reason == "tool_use"
    assert result.terminal_reason == "max_turns" and result.errors == ["Reached maximum number of turns (1)"]


class Launcher(SlowRead):
    name: ClassVar[str] = "Launcher"
    result_as_blocks = True

    async def run(self, input, ctx):
        return ToolResult(content="launched", data={"status": "async_launched"})

    def tool_use_result(self, result):
        return result.data


async def test_a_tool_may_answer_in_text_blocks_with_a_structured_result():
    loop = _loop([{"tool_use": _call("Launcher", "a")}, {"text": "done"}], [Launcher(Timeline())])
    user = (await _events(loop))[1]
    assert user.message["content"][0]["content"] == [{"type": "text", "text": "launched"}]
    assert loop.messages[2]["content"][0]["content"] == [{"type": "text", "text": "launched"}]
    assert user.tool_use_result == {"status": "async_launched"}


class _Streaming:
    """A model that streams: each reply's raw events reach the request's ``on_stream`` first."""

    def __init__(self, model):
        self.model = model

    async def create(self, request):
        for index in range(2):
            if request.on_stream is not None:
                request.on_stream({"type": "content_block_delta", "index": 0, "delta": {"text": f"part {index}"}})
            await asyncio.sleep(0)
        return await self.model.create(request)


async def test_partial_messages_stream_before_their_message_only_when_asked():
    for partial in (True, False):
        loop = _loop([{"text": "hello"}], [])
        loop.model = _Streaming(loop.model)
        loop.config.partial_messages = partial
        events = await _events(loop)
        kinds = [e.type for e in events]
        if partial:
            assert kinds == ["stream_event", "stream_event", "assistant", "result"]
            assert [e.event["delta"]["text"] for e in events[:2]] == ["part 0", "part 1"]
            assert events[0].wire()["parent_tool_use_id"] is None and events[0].wire()["uuid"]
        else:
            assert kinds == ["assistant", "result"]


async def test_each_request_carries_the_agents_effort_as_its_model_takes_it():
    for model_id, effort, sent in (("claude-opus-4-8", "xhigh", "xhigh"), ("claude-haiku-4-5", "low", None)):
        model = ScriptedModel.from_turns([{"text": "done"}])
        config = LoopConfig(model_id=model_id, system=[{"type": "text", "text": "s"}], effort=effort)
        loop = AgentLoop(model=model, config=config, executor=ToolExecutor([], ToolContext(agent_id="a", cwd=Path("."))))
        await _events(loop)
        assert model.requests[0].effort == sent
