"""A session known only by its transcript (a session store's, materialized by claude-agent-sdk into
a fresh ``CLAUDE_CONFIG_DIR``) resumes under its own id: covey/resume_rebuild.py; no Ray."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from covey.agents.session_files import project_folder
from covey.agents.transcript import TranscriptWriter
from covey.resume import ResumeError, find_resume, read_record
from covey.session.record import record_session

HELLO = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}]


def _lone(config: Path, project: Path, *, cwd: str | None = None) -> tuple[str, Path]:
    """A session's main transcript and nothing else, as the SDK materializes one from its store."""
    session_id = str(uuid.uuid4())
    path = project_folder(config, project) / f"{session_id}.jsonl"
    writer = TranscriptWriter(path, session_id=session_id, agent_id="agent-main", cwd=project if cwd is None else cwd)

    async def write() -> None:
        for message in HELLO:
            await writer.append(message["role"], message, timestamp="2026-01-02T03:04:05.000Z")

    asyncio.run(write())
    writer.close()
    return session_id, path


def test_a_transcript_without_its_record_resumes_under_its_own_id(tmp_path):
    project = (tmp_path / "project")
    project.mkdir()
    session_id, path = _lone(tmp_path / "config", project)
    point = find_resume(tmp_path / "config", session_id=session_id)
    assert point.record.session_id == session_id and point.transcript == path
    assert point.record.cwd == str(project.resolve()) and point.record.model_id is None
    assert point.record.permission_mode is None  # from the command line and settings, as Claude Code
    assert point.history == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}, HELLO[1]]
    assert point.last_uuid == json.loads(path.read_text().splitlines()[-1])["uuid"]
    assert point.record.created_s == point.record.updated_s == 1767323045.0
    assert not (path.parent / session_id).exists()  # nothing written until its first turn


def test_the_rebuilt_session_gets_its_record_at_its_first_turn(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    session_id, path = _lone(tmp_path / "config", project)
    point = find_resume(tmp_path / "config", session_id=session_id)
    record_session(point.transcript_dir, session_id=session_id, main_agent_id=point.record.main_agent_id,
                   cwd=project, model_id="claude-sonnet-4-5", mode="default")
    record = read_record(tmp_path / "config", session_id)
    assert record.transcript == str(path) and record.main_agent_id == point.record.main_agent_id
    assert find_resume(tmp_path / "config", session_id=session_id).record.model_id == "claude-sonnet-4-5"


@pytest.mark.parametrize("cwd", ["", "/somewhere/else", "/nul\0byte"])
def test_a_lone_transcript_naming_no_directory_of_its_project_is_refused(tmp_path, cwd):
    project = tmp_path / "project"
    project.mkdir()
    session_id, path = _lone(tmp_path / "config", project, cwd=cwd)
    with pytest.raises(ResumeError, match="has no session.json beside it and names no directory") as caught:
        find_resume(tmp_path / "config", session_id=session_id)
    assert repr(str(path)) in str(caught.value) and repr(session_id) in str(caught.value)


def test_a_lone_transcript_of_another_session_is_refused(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    session_id, path = _lone(tmp_path / "config", project)
    other = str(uuid.uuid4())
    path.rename(path.with_name(f"{other}.jsonl"))
    with pytest.raises(ResumeError, match="belongs to session"):
        find_resume(tmp_path / "config", session_id=other)
