"""A session known only by its transcript (a session store's, materialized by claude-agent-sdk into
a fresh ``CLAUDE_CONFIG_DIR``) resumes under its own id: covey/transcripts/rebuild.py; no Ray."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path

import pytest

from covey.session.record import record_session
from covey.transcripts.resume import ResumeError, find_resume, read_record
from covey.transcripts.session_files import project_folder
from covey.transcripts.transcript import TranscriptWriter

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


# -- --continue: the project's latest transcript, with or without its record ---------------------


def _recorded(config: Path, project: Path, *, updated_s: float) -> str:
    """A session of covey's own: its transcript and its record, last updated at ``updated_s``."""
    session_id, _ = _lone(config, project)
    record_session(config, session_id=session_id, main_agent_id="agent-main", cwd=project, model_id="m", mode="default")
    record = read_record(config, session_id)
    path = project_folder(config, project) / session_id / "session.json"
    path.write_text(record.model_copy(update={"updated_s": updated_s}).model_dump_json())
    return session_id


def _written_at(path: Path, when_s: float) -> None:
    os.utime(path, (when_s, when_s))


def test_continue_takes_a_transcript_without_its_record_when_it_is_the_latest(tmp_path):
    """As Claude Code's ``--continue``: the project's most recently written transcript, though no
    session.json is beside it (Claude Code's own, or a session store's)."""
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "config"
    recorded = _recorded(config, project, updated_s=1_000.0)
    older_lone, older_path = _lone(config, project)
    _written_at(older_path, 500.0)
    assert find_resume(config, continue_in=project).record.session_id == recorded  # the record is newer

    newer_lone, path = _lone(config, project)
    _written_at(path, 2_000.0)
    point = find_resume(config, continue_in=project)
    assert (point.record.session_id, point.transcript, point.record.cwd) == (newer_lone, path, str(project.resolve()))
    assert point.history[-1] == HELLO[1] and older_lone != newer_lone


def test_continue_passes_over_lone_transcripts_of_other_directories_and_other_files(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "config"
    _, elsewhere = _lone(config, project, cwd="/somewhere/else")  # in the folder, but not this directory's
    (elsewhere.parent / "notes.jsonl").write_text("{}\n")  # not a session's transcript
    with pytest.raises(ResumeError, match="No conversation found to continue in"):
        find_resume(config, continue_in=project)
    mine, _ = _lone(config, project)
    _written_at(elsewhere, 3_000_000_000.0)  # the latest written, yet another directory's
    assert find_resume(config, continue_in=project).record.session_id == mine
