"""What a session spent, as its result reports it: every agent's requests, killed ones too."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from covey.events import ResultEvent, TaskNotification, TaskStarted
from covey.session import Session
from tests.session.scripts import CHILD, MAIN, agent_call, main_texts, rule, scripted
from tests.session.served import model_for, served

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors

REQUEST_USD = (1000 * 3 + 100 * 15) / 1e6
"""One request of 1,000 input and 100 output tokens at Sonnet's price."""


def _session(tmp_path: Path, model) -> Session:
    (tmp_path / "proj").mkdir(exist_ok=True)
    return Session(cwd=str(tmp_path / "proj"), model=model, transcript_dir=str(tmp_path / "t"), pool_size=2, max_turns=8)


async def _first_turn_told(session: Session, agent_id: str, timeout_s: float = 60.0) -> None:
    """Poll the registry until it has heard of the agent's first turn and its tool use."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        record = await session.runtime.registry.record(agent_id)
        if record is not None and record.turns >= 1 and record.tool_uses >= 1:
            return
        assert asyncio.get_running_loop().time() < deadline, f"the registry never heard of a turn: {record}"
        await asyncio.sleep(0.05)


async def test_the_result_counts_every_agents_requests_and_usage_stays_the_main_agents(tmp_path):
    three = {"tool_use": [agent_call(f"task {i}") for i in range(3)]}  # three sync children at once
    api = served(
        rule(CHILD, {"text": "CHILD_DONE"}),
        rule({**MAIN, "last_tool_result_contains": "CHILD_DONE"}, {"text": "all done"}),
        rule(MAIN, three),
        usage={"input_tokens": 1000, "output_tokens": 100},
    )
    with api:
        session = _session(tmp_path, model_for(api))
        try:
            result = await asyncio.wait_for(session.run("go"), 120)
        finally:
            session.close()
    assert not result.is_error and result.result == "all done" and len(api.requests) == 5
    assert result.usage["input_tokens"] == 2000 and result.usage["output_tokens"] == 200  # the main's two
    assert result.total_cost_usd == pytest.approx(5 * REQUEST_USD)
    (model_id, spent), = result.model_usage.items()
    assert model_id.startswith("claude-sonnet") and (spent.input_tokens, spent.output_tokens) == (5000, 500)
    assert spent.cost_usd == pytest.approx(5 * REQUEST_USD) and spent.context_window > 0
    main_result = [e for e in result.events if isinstance(e, ResultEvent)][-1].wire()
    assert main_result["total_cost_usd"] == result.total_cost_usd
    assert main_result["modelUsage"][model_id]["inputTokens"] == 5000
    assert result.agents["subtree_cost_usd"] == pytest.approx(5 * REQUEST_USD)


async def test_a_killed_agent_reports_what_it_spent_before_it_ended(tmp_path):
    model = scripted(
        rule(CHILD, {"tool_use": {"name": "Glob", "input": {"pattern": "*.none"}}}, times=1),
        rule(CHILD, {"text": "never"}, latency_s=30),
        rule({**MAIN, "last_message_contains": "<task-notification>"}, {"text": "saw the kill"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": agent_call("slow", background=True)}),
    )
    session = _session(tmp_path, model)
    events = []
    try:
        async for event in session.stream("go"):
            events.append(event)
            if isinstance(event, TaskStarted):
                await _first_turn_told(session, event.task_id)  # its second request waits (30 s)
                assert await session.runtime.registry.kill_agent(event.task_id)
        child = next(r for r in await session.runtime.registry.records() if r.role == "subagent")
        tree = await session.tree()
    finally:
        session.close()
    assert child.status == "killed" and child.turns >= 1 and child.tool_uses == 1
    assert child.usage.total > 0 and child.cost_usd > 0 and child.report.usage.total == child.usage.total
    # The notice the main agent read (its transcript has it; stdout has the task_notification event).
    notice = next(text for text in main_texts(session, tmp_path / "t") if "<task-notification>" in text)
    assert re.search(r"<subagent_tokens>(\d+)</subagent_tokens>", notice).group(1) == str(child.usage.total)
    [notified] = [e for e in events if isinstance(e, TaskNotification)]
    assert notified.status == "killed" and notified.usage.total_tokens == child.usage.total
    assert tree["children"][0]["tokens"] == child.usage.total
    result = [e for e in events if isinstance(e, ResultEvent)][-1]
    assert result.result == "saw the kill"
    main_cost = tree["cost_usd"]
    assert result.total_cost_usd == pytest.approx(main_cost + child.cost_usd, abs=1e-6)
