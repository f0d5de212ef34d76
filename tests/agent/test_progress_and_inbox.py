"""What an agent tells the session's actors, and how often (plain fakes, no Ray)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from covey.agent import progress as progress_module
from covey.agent.inbox import inbox_for
from covey.agent.progress import Progress
from covey.definitions.definition import AgentDefinition
from covey.events import AssistantEvent, UserEvent
from covey.model.pricing import PriceTable
from covey.runtime.limits import Limits
from covey.runtime.spec import AgentSpec


class FakeRegistry:
    def __init__(self) -> None:
        self.tells: list[tuple[str, dict[str, Any]]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def tell_progress(self, agent_id: str, **fields: Any) -> None:
        self.tells.append(("progress", fields))

    async def progress(self, agent_id: str, **fields: Any) -> None:
        await asyncio.sleep(0.01)  # a round trip: the caller must wait for it
        self.calls.append(("progress", fields))


class FakeMailbox:
    def __init__(self) -> None:
        self.drains = 0

    async def drain(self, agent_id: str) -> list[Any]:
        self.drains += 1
        return []


class FakeWriter:
    async def append(self, type: str, message: dict[str, Any], **fields: Any) -> None:
        pass


def _spec(*, depth: int = 1, teams: bool = False, history: list | None = None, stall_ms: int = 600_000,
          budget_usd: float | None = None, coordinator: bool = False) -> AgentSpec:
    runtime = SimpleNamespace(registry=FakeRegistry(), mailbox=FakeMailbox(), teams=teams, session_id="s",
                              messaging=teams or coordinator, coordinator=coordinator,
                              limits=Limits(stall_ms=stall_ms, budget_usd=budget_usd))
    return AgentSpec(
        session_id="s", agent_id="agent-1", definition=AgentDefinition(name="general-purpose", prompt="p"),
        prompt="go", model_id="m", cwd=".", depth=depth, history=history, runtime=runtime,
    )


def _turn(progress: Progress, tool: bool) -> list[Any]:
    content = [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}] if tool else [{"type": "text", "text": "hi"}]
    return [
        AssistantEvent(session_id="s", message={"role": "assistant", "content": content, "model": "claude-sonnet-4-6",
                                                "usage": {"input_tokens": 1000, "output_tokens": 100}}),
        UserEvent(session_id="s", message={"role": "user", "content": []}),
    ]


async def _turns(progress: Progress, n: int) -> None:
    for _ in range(n):
        for event in _turn(progress, tool=True):
            await progress.observe(event, FakeWriter())


async def _until(check, timeout_s: float = 5.0) -> None:
    """Poll ``check`` until it holds (or fail after ``timeout_s``): what a test waits for, not a guess of how long."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out waiting"
        await asyncio.sleep(0.005)


async def test_progress_is_told_at_most_once_per_interval_with_the_latest_figures(monkeypatch):
    monkeypatch.setattr(progress_module, "PROGRESS_INTERVAL_S", 0.2)
    spec = _spec()
    progress = Progress(spec, PriceTable.load(None))
    tells = spec.runtime.registry.tells
    loop = asyncio.get_running_loop()
    started = loop.time()
    await _turns(progress, 2)
    assert tells == []  # nothing in the run's first interval
    await _until(lambda: len(tells) >= 1)
    assert loop.time() - started >= 0.2 * 0.9  # not before the interval (the clock's resolution aside)
    assert len(tells) == 1 and tells[0][1]["turns"] == 2  # then the latest figures
    told = loop.time()
    await _turns(progress, 1)
    assert len(tells) == 1  # at most one per interval
    await _until(lambda: len(tells) >= 2)
    assert loop.time() - told >= 0.2 * 0.9
    assert len(tells) == 2 and tells[1][1]["turns"] == 3 and tells[1][1]["tool_uses"] == 3


async def test_a_run_shorter_than_the_interval_tells_nothing(monkeypatch):
    monkeypatch.setattr(progress_module, "PROGRESS_INTERVAL_S", 0.05)
    spec = _spec()
    progress = Progress(spec, PriceTable.load(None))
    await _turns(progress, 3)
    progress.close()  # the run ended: its report carries the figures
    await asyncio.sleep(0.15)  # three intervals: a message still due would have gone by now
    assert spec.runtime.registry.tells == []


async def test_a_short_stall_limit_brings_the_first_message_forward(monkeypatch):
    monkeypatch.setattr(progress_module, "PROGRESS_INTERVAL_S", 10.0)
    spec = _spec(stall_ms=200)  # the watchdog must hear of a tool in flight within a quarter of it
    progress = Progress(spec, PriceTable.load(None))
    for event in _turn(progress, tool=True)[:1]:  # a tool call, still running
        await progress.observe(event, FakeWriter())
    tells = spec.runtime.registry.tells
    await _until(lambda: len(tells) >= 1, timeout_s=5.0)  # long before the 10 s interval
    assert len(tells) == 1 and tells[0][1]["tools_in_flight"] == ["Read"]


async def test_with_a_budget_every_turn_is_counted_before_the_agent_goes_on():
    spec = _spec(budget_usd=1.0)
    progress = Progress(spec, PriceTable.load(None))
    calls = spec.runtime.registry.calls
    await progress.observe(_turn(progress, tool=True)[0], FakeWriter())
    assert len(calls) == 1  # at once, not after the interval, and awaited
    answer = _turn(progress, tool=False)[0]
    await progress.observe(answer, FakeWriter())  # a turn without tool calls counts too
    method, figures = calls[-1]
    assert method == "progress" and len(calls) == 2 and figures["turns"] == 2
    assert figures["cost_usd"] == pytest.approx(2 * (1000 * 3 + 100 * 15) / 1e6)
    by_model = figures["model_usage"]["claude-sonnet-4-6"]
    assert (by_model.input_tokens, by_model.output_tokens) == (2000, 200)
    assert by_model.cost_usd == pytest.approx(figures["cost_usd"])


async def test_the_main_agent_counts_every_turn_a_child_without_a_budget_does_not(monkeypatch):
    monkeypatch.setattr(progress_module, "PROGRESS_INTERVAL_S", 0.05)
    main, child = _spec(depth=0), _spec(depth=1)
    for spec in (main, child):
        progress = Progress(spec, PriceTable.load(None))
        await progress.observe(_turn(progress, tool=False)[0], FakeWriter())
        progress.close()
    assert len(main.runtime.registry.calls) == 1 and main.runtime.registry.calls[0][1]["turns"] == 1
    assert child.runtime.registry.calls == [] and child.runtime.registry.tells == []


async def test_the_report_carries_usage_per_model():
    progress = Progress(_spec(), PriceTable.load(None))
    await _turns(progress, 2)
    report = progress.report(status="killed", reason="killed on request")
    assert report.usage.total == 2200 and report.model_usage["claude-sonnet-4-6"].output_tokens == 200
    assert report.model_usage["claude-sonnet-4-6"].cost_usd == pytest.approx(report.cost_usd)


async def test_a_child_that_launched_nothing_does_not_ask_the_mailbox():
    spec = _spec(depth=1)
    inbox = inbox_for(spec, None)
    assert await inbox.drain() == [] and spec.runtime.mailbox.drains == 0
    inbox.note_launch()  # its own background child may now notify it
    await inbox.drain()
    assert spec.runtime.mailbox.drains == 1


async def test_the_main_agent_a_resumed_one_and_team_and_coordinator_sessions_always_look():
    for spec in (_spec(depth=0), _spec(history=[{"role": "user", "content": "x"}]), _spec(teams=True),
                 _spec(coordinator=True)):
        await inbox_for(spec, None).drain()
        assert spec.runtime.mailbox.drains == 1


async def test_a_rate_wait_ends_when_its_request_goes_and_the_report_keeps_it():
    progress = Progress(_spec(), PriceTable.load(None))
    progress.rate_waiting({"apiLimit": "requests", "cause": "rate_limit_error", "waitMs": 2000})
    progress.rate_waiting({"apiLimit": "requests", "cause": "queue", "waitMs": 500})  # the same wait, updated
    assert progress.rate_wait is not None and progress.rate_waits == []
    since = progress.rate_wait["since"]
    await _turns(progress, 1)
    assert progress.rate_wait is None
    (wait,) = progress.rate_waits
    assert (wait["limit"], wait["cause"], wait["since"]) == ("requests", "queue", since) and wait["until"] >= since
    assert progress.report().rate_waits == [wait]
    assert progress._figures()["rate_waits"] == [wait]  # the registry's record hears it with the figures


async def test_a_tools_own_request_counts_as_the_agents_spending():
    """WebFetch's, WebSearch's and prompt hooks' requests go through ``CountedModel``."""
    from covey.agent.progress import CountedModel
    from covey.model.base import ModelRequest
    from covey.model.messages import Message

    class Answers:
        async def create(self, request: ModelRequest) -> Message:
            return Message.model_validate({
                "id": "msg_1", "type": "message", "role": "assistant", "model": request.model,
                "content": [{"type": "text", "text": "a page's answer"}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 1000, "output_tokens": 100}})

    progress = Progress(_spec(), PriceTable.load(None))
    model = CountedModel(Answers(), progress)
    await model.create(ModelRequest(model="claude-sonnet-4-5", messages=[{"role": "user", "content": "q"}]))
    assert (progress.usage.input_tokens, progress.usage.output_tokens, progress.turns) == (1000, 100, 0)
    assert progress.cost_usd > 0 and progress.report().cost_usd == round(progress.cost_usd, 6)


async def test_a_reply_recorded_a_block_a_record_is_counted_once_with_its_text():
    progress = Progress(_spec(), PriceTable.load(None))
    reply = {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-6",
             "usage": {"input_tokens": 1000, "output_tokens": 100}}
    blocks = [{"type": "text", "text": "Reading it."}, {"type": "tool_use", "id": "t", "name": "Read", "input": {}}]
    records: list[dict[str, Any]] = []

    class Writer:
        async def append(self, type: str, message: dict[str, Any], **fields: Any) -> None:
            records.append(message)

    for index, block in enumerate(blocks):
        await progress.observe(AssistantEvent(session_id="s", message={**reply, "content": [block]},
                                              ends_reply=index == len(blocks) - 1), Writer())

    assert [r["content"] for r in records] == [[block] for block in blocks]
    assert (progress.turns, progress.usage.total, progress.tool_uses) == (1, 1100, 1)
    assert progress.last_text == "Reading it." and progress.in_flight == ["Read"]
