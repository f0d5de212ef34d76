"""A session that is not kept (``session_persistence=False``, ``--no-session-persistence``), run on
the shared local Ray: its agents' transcripts work while it runs (a background child's output file
is read by its parent), nothing is left where sessions are kept, and resuming a kept session this
way continues a private copy of it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from covey.session import Session
from covey.transcripts.resume import ResumeError
from tests.session.scripts import CHILD, MAIN, agent_call, rule, scripted

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors


def _session(tmp_path: Path, model, **options) -> Session:
    (tmp_path / "proj").mkdir(exist_ok=True)
    return Session(cwd=str(tmp_path / "proj"), model=model, transcript_dir=str(tmp_path / "kept"), pool_size=2,
                   max_turns=8, **options)


def _files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.exists() else []


async def test_a_background_childs_output_file_is_read_while_the_session_runs_and_then_gone(tmp_path):
    model = scripted(
        rule(CHILD, {"text": "CHILD_SAID_THIS"}, latency_s=0.3),
        rule({**MAIN, "last_tool_result_contains": "CHILD_SAID_THIS"}, {"text": "READ_IT"}),
        rule({**MAIN, "last_message_contains": "<task-notification>"},
             {"tool_use": {"name": "Read", "input_from": {"file_path": r"output_file: (/\S+)"}}}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": agent_call("look around", background=True)}),
    )
    session = _session(tmp_path, model, session_persistence=False)
    private = session.private
    try:
        result = await asyncio.wait_for(session.run("go"), 120)
        written = _files(private)
    finally:
        session.close()
    assert not result.is_error and result.result == "READ_IT", result.events[-1]
    assert any(path.name.startswith("agent-") and path.suffix == ".jsonl" for path in written)  # the child's
    assert any(path.name == f"{session.session_id}.jsonl" for path in written)  # the main agent's
    assert not private.exists() and _files(tmp_path / "kept") == []
    with pytest.raises(ResumeError):
        Session(cwd=str(tmp_path / "proj"), model=model, transcript_dir=str(tmp_path / "kept"),
                resume=session.session_id)


async def test_resuming_a_kept_session_unkept_continues_a_private_copy_and_leaves_the_original(tmp_path):
    model = scripted(
        rule({**MAIN, "messages_contain": ["FIRST_PROMPT", "SECOND_PROMPT"]}, {"text": "REMEMBERED"}),
        rule(MAIN, {"text": "FIRST_ANSWER"}),
    )
    kept = _session(tmp_path, model)
    try:
        first = await asyncio.wait_for(kept.run("FIRST_PROMPT"), 120)
    finally:
        kept.close()
    assert first.result == "FIRST_ANSWER"
    before = {path: path.read_bytes() for path in _files(tmp_path / "kept")}
    assert any(path.name == f"{kept.session_id}.jsonl" for path in before)
    resumed = _session(tmp_path, model, resume=kept.session_id, session_persistence=False)
    assert resumed.session_id == kept.session_id and resumed.transcript_folder.is_relative_to(resumed.private)
    try:
        second = await asyncio.wait_for(resumed.run("SECOND_PROMPT"), 120)
    finally:
        resumed.close()
    assert second.result == "REMEMBERED"  # the conversation went on
    assert {path: path.read_bytes() for path in _files(tmp_path / "kept")} == before  # the original untouched
    assert not resumed.private.exists()
