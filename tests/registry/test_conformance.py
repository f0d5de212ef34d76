"""One suite, two backends (STYLE 3): the registry's answers are the same from the in-memory
supervisor and from its Ray actor (fixtures in conftest); agents run on the real runner."""

from __future__ import annotations

import asyncio
from typing import Any

from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.runtime.answers import Launched, Refused
from covey.runtime.records import FinalReport
from covey.runtime.spec import AgentSpec
from covey.teams.messages import TaskNotice
from tests.registry.fakes import request


def _spec(tmp_path: Any, agent_id: str = "child", latency_s: float = 0.0, background: bool = True) -> AgentSpec:
    model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "done"}, "latency_s": latency_s}]})
    return AgentSpec(session_id="s", agent_id=agent_id, definition=AgentDefinition(name="t"), prompt="hi",
                     model=model, model_id="m", cwd=str(tmp_path), tool_names=[], transcript_dir=str(tmp_path),
                     parent_agent_id="main", depth=1, background=background, description="d")


async def _notices(mailbox: Any) -> list[TaskNotice]:
    return [m for m in await mailbox.drain("main") if isinstance(m, TaskNotice)]


async def test_a_refused_launch_is_an_answer_naming_its_check_and_leaves_no_record(backend, tmp_path):
    registry = backend.registry
    await registry.register_main("main", "m", str(tmp_path))
    deep = await registry.launch(request(depth=5), _spec(tmp_path))
    unknown = await registry.launch(request("other", type_known=False), None)
    assert isinstance(deep, Refused) and deep.kind == "depth" and "depth limit is 2" in deep.text
    assert isinstance(unknown, Refused) and unknown.kind == "type" and unknown.text == "Agent type 'general-purpose' not found."
    assert [r.agent_id for r in await registry.records()] == ["main"]
    assert await registry.stop_all("nothing runs") == []


async def test_a_background_agent_runs_to_its_end_and_its_owner_gets_one_notice(backend, tmp_path):
    registry = backend.registry
    await registry.register_main("main", "m", str(tmp_path))
    launched = await registry.launch(request(), _spec(tmp_path), False, "home", str(tmp_path / "child.jsonl"))
    assert isinstance(launched, Launched) and launched.actor is None and launched.record.agent_id == "child"
    assert await registry.wait_idle(60)
    record = await registry.record("child")
    assert record.status == "completed" and record.report.text == "done"
    [notice] = await _notices(backend.mailbox)
    assert notice.task_id == "child" and notice.key == "child#0"
    assert await registry.outstanding("main") == []


async def test_a_sync_agent_is_followed_to_its_report_and_notifies_nobody(backend, tmp_path):
    registry = backend.registry
    await registry.register_main("main", "m", str(tmp_path))
    launched = await registry.launch(request(background=False), _spec(tmp_path, background=False), True)
    # The record as the launch answered it (a scripted child may have ended by the time it is read).
    assert isinstance(launched, Launched) and launched.record.agent_id == "child" and launched.actor is not None
    items = [item async for item in launched.actor.follow("child")]
    assert isinstance(items[-1], FinalReport) and items[-1].text == "done"
    assert (await registry.report_of("child", 60)).text == "done"
    assert await registry.wait_idle(60) and await _notices(backend.mailbox) == []


async def test_a_killed_agent_ends_killed_with_one_notice(backend, tmp_path):
    registry = backend.registry
    await registry.register_main("main", "m", str(tmp_path))
    await registry.launch(request(), _spec(tmp_path, latency_s=30))
    await asyncio.sleep(0.2)
    assert await registry.kill_agent("child", "killed", "stopped by the user")
    assert await registry.wait_idle(30)
    record = await registry.record("child")
    assert record.status == "killed" and record.report.text == "stopped by the user"
    assert [n.task_id for n in await _notices(backend.mailbox)] == ["child"]


async def test_an_agent_is_found_by_its_id_as_claude_code_shows_it(backend, tmp_path):
    """An Agent call's result shows a child's id without covey's ``agent-`` (as Claude Code shows its
    ids): what the model then gives SendMessage, TaskOutput or TaskStop finds the same agent."""
    registry = backend.registry
    await registry.register_main("main", "m", str(tmp_path))
    child = "agent-0123456789abcdef"
    await registry.launch(request(child), _spec(tmp_path, agent_id=child, latency_s=30))
    assert (await registry.record("0123456789abcdef")).agent_id == "agent-0123456789abcdef"
    assert (await registry.find("0123456789abcdef")).agent_id == "agent-0123456789abcdef"
    assert await registry.record("0123456789abcdee") is None
    assert await registry.kill_agent("0123456789abcdef", "killed", "stopped by the user")
    assert await registry.wait_idle(30)
    assert (await registry.record("agent-0123456789abcdef")).status == "killed"
