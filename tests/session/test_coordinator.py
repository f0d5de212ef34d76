"""Coordinator mode end to end on the shared local Ray: research → implement → verify
with three workers, a follow-up to one of them, and a report once every notification is in."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from covey.events import ResultEvent, TaskNotification, TaskStarted, UserEvent
from covey.model.scripted import ScriptedModel
from covey.session import Session
from tests.session.scripts import main_texts

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors

CORPUS = Path(__file__).parents[1] / "data/claude_files/coordinator"


def _transcript(record) -> list[str]:
    return [json.dumps(json.loads(line)["message"]) for line in Path(record.output_file).read_text().splitlines()]


async def test_a_coordinator_runs_three_workers_continues_one_and_reports_after_every_notification(tmp_path):
    project = Path(shutil.copytree(CORPUS / "project", tmp_path / "project"))
    session = Session(cwd=str(project), model=ScriptedModel.from_file(CORPUS / "three_workers.yaml"),
                      coordinator=True, pool_size=3, max_turns=20, transcript_dir=str(tmp_path / "t"))
    try:
        result = await asyncio.wait_for(session.run("Make greet handle an empty name."), 180)
        records = {r.description: r for r in await session.runtime.registry.records() if r.role != "main"}
        unread = await session.runtime.mailbox.pending(session.main_agent_id)
        texts = main_texts(session, tmp_path / "t")
    finally:
        session.close()
    assert not result.is_error and "REPORT_COMPLETE" in result.result, result.result
    research, implement, verify = (records[d] for d in ("research the bug", "implement the fix", "verify the fix"))

    # Three workers, each started in the background (no run_in_background in any call).
    started = [e for e in result.events if isinstance(e, TaskStarted)]
    assert [(e.description, e.subagent_type, e.is_backgrounded) for e in started] == [
        ("research the bug", "worker", True), ("implement the fix", "worker", True), ("verify the fix", "worker", True)]
    receipts = [r for r in _tool_results(result.events) if "Async agent launched" in r]
    assert len(receipts) == 3 and all(f"agentId: {r.agent_id.removeprefix('agent-')} " in "".join(receipts) for r in records.values())

    # Four notifications, read in order: the implementer's twice (continued under the same id).
    notified = [e.task_id for e in result.events if isinstance(e, TaskNotification)]
    assert notified == [research.agent_id, implement.agent_id, verify.agent_id, implement.agent_id]
    notices = [text for text in texts if "<task-id>" in text]
    assert [n.split("<task-id>")[1].split("</task-id>")[0] for n in notices] == notified  # each one read
    assert implement.notifications == 2 and implement.runs == 1
    assert all(r.status == "completed" and r.agent_type == "worker" for r in records.values())
    assert unread == 0

    # The final answer comes only after the last notification; no earlier turn claimed the result.
    last_notice = max(i for i, e in enumerate(result.events) if isinstance(e, TaskNotification))
    answers = [(i, e.result) for i, e in enumerate(result.events) if isinstance(e, ResultEvent)]
    assert answers[-1][0] == len(result.events) - 1 and answers[-1][0] > last_notice
    assert not any("REPORT_COMPLETE" in text for _, text in answers[:-1])

    # The implementer was resumed from its transcript: its follow-up came from the coordinator.
    lines = _transcript(implement)
    assert "IMPLEMENT:" in lines[0] or any("IMPLEMENT:" in line for line in lines[:3])
    assert 'from=\\"coordinator\\"' in lines[-2] and "FOLLOW_UP" in lines[-2] and "FOLLOWUP_DONE" in lines[-1]
    assert "def greet" in "".join(_transcript(research))  # the research worker read the file itself


def _tool_results(events) -> list[str]:
    main = events[1].agent_id
    return ["".join(part.get("text", "") for part in block["content"]) if isinstance(block["content"], list)
            else block["content"]
            for e in events if isinstance(e, UserEvent) and e.agent_id == main
            for block in e.message["content"] if block.get("type") == "tool_result"]
