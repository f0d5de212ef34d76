"""Where covey keeps a session's files (covey/transcripts/session_files.py): where Claude Code keeps its
own, so claude-agent-sdk's session functions, imported and run as a program would, read them. No Ray."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path

import claude_agent_sdk as sdk
import pytest
from claude_agent_sdk._internal.sessions import _sanitize_path

from covey.transcripts.session_files import SessionRoots, project_folder, project_name, transcript_path
from covey.transcripts.transcript import TranscriptWriter

CHILD = "agent-0123456789abcdef"


def _write(path: Path, session_id: str, agent_id: str, cwd: Path, messages: list[dict], *, sidechain: bool) -> None:
    writer = TranscriptWriter(path, session_id=session_id, agent_id=agent_id, cwd=cwd, sidechain=sidechain)

    async def write() -> None:
        for message in messages:
            await writer.append(message["role"], message)

    asyncio.run(write())
    writer.close()


def _conversation(prompt: str, answer: str) -> list[dict]:
    return [{"role": "user", "content": prompt},
            {"role": "assistant", "content": [{"type": "text", "text": answer}]}]


@pytest.fixture
def config(tmp_path, monkeypatch) -> Path:
    """The SDK's config dir for this test (it reads ``CLAUDE_CONFIG_DIR``, as Claude Code does)."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return tmp_path / "claude"


def _session(config: Path, project: Path) -> str:
    """A session as covey writes one: the main agent's transcript and a sub-agent's."""
    session_id, folder = str(uuid.uuid4()), project_folder(config, project)
    _write(transcript_path(folder, session_id, "agent-main", main=True), session_id, "agent-main", project,
           _conversation("Count the files", "There are 3."), sidechain=False)
    _write(transcript_path(folder, session_id, CHILD, main=False), session_id, CHILD, project,
           _conversation("List the files", "a, b, c"), sidechain=True)
    return session_id


def test_the_sdk_lists_and_reads_a_session_and_its_sub_agent_as_covey_writes_them(config, tmp_path):
    project = tmp_path / "my_project.v2"
    project.mkdir()
    session_id = _session(config, project)

    messages = sdk.get_session_messages(session_id, directory=str(project))
    assert [(m.type, m.session_id) for m in messages] == [("user", session_id), ("assistant", session_id)]
    assert messages[-1].message["content"] == [{"type": "text", "text": "There are 3."}]
    (listed,) = sdk.list_sessions(directory=str(project))  # the sub-agent's transcript is no session of its own
    assert (listed.session_id, listed.first_prompt, listed.cwd) == (session_id, "Count the files", str(project))
    assert [s.session_id for s in sdk.list_sessions()] == [session_id]  # across all projects too
    assert sdk.list_subagents(session_id, directory=str(project)) == [CHILD.removeprefix("agent-")]
    sub = sdk.get_subagent_messages(session_id, CHILD.removeprefix("agent-"), directory=str(project))
    assert [m.message["content"] for m in sub][-1] == [{"type": "text", "text": "a, b, c"}]
    assert sdk.get_session_messages(session_id) == messages  # found without naming the directory


def test_a_project_reached_through_a_symlink_is_the_same_project(config, tmp_path):
    project = tmp_path / "real"
    project.mkdir()
    (tmp_path / "link").symlink_to(project)
    session_id = _session(config, tmp_path / "link")
    assert project_folder(config, tmp_path / "link") == project_folder(config, project)
    assert len(sdk.get_session_messages(session_id, directory=str(project))) == 2


def test_a_long_project_path_is_named_as_the_sdk_looks_for_it(config, tmp_path):
    project = tmp_path / ("deep_" * 50) / "project"
    project.mkdir(parents=True)
    assert len(project_name(project)) > 200 and project_name(project) == _sanitize_path(os.path.realpath(project))
    session_id = _session(config, project)
    assert [m.type for m in sdk.get_session_messages(session_id, directory=str(project))] == ["user", "assistant"]


@pytest.mark.parametrize("path", ["/home/u/my project", "/srv/app_1/ü-ñ", "C:/x.y", "/a" * 120])
def test_project_names_follow_claude_codes_rule(path):
    assert project_name(path) == _sanitize_path(os.path.realpath(path))


def test_a_sub_agent_transcript_and_its_meta_file_are_where_claude_code_puts_them(tmp_path):
    folder = tmp_path / "projects" / "-p"
    assert transcript_path(folder, "s1", "agent-ab12", main=False) == folder / "s1" / "subagents" / "agent-ab12.jsonl"
    assert transcript_path(folder, "s1", "ab12", main=False).name == "agent-ab12.jsonl"
    assert transcript_path(folder, "s1", "agent-ab12", main=True) == folder / "s1.jsonl"


def test_where_sessions_go_a_transcript_dir_then_the_envs_config_dir_then_home():
    assert SessionRoots.of("/t") == SessionRoots(Path("/t"), Path("/t"))  # an older covey's sessions were in it too
    assert SessionRoots.of(None, env={"CLAUDE_CONFIG_DIR": "/cfg"}, home=Path("/h")) == SessionRoots(
        Path("/cfg"), Path("/h/.covey/transcripts"))
    assert SessionRoots.of(None, env={}, home=Path("/h")) == SessionRoots(
        Path("/h/.claude"), Path("/h/.covey/transcripts"))
    assert SessionRoots.of(None, env={}) == SessionRoots(Path("~/.claude"), Path("~/.covey/transcripts"))


def test_a_sub_agents_meta_file_names_the_call_that_launched_it(tmp_path):
    from types import SimpleNamespace

    from covey.transcripts.session_files import agent_meta, write_agent_meta

    path = tmp_path / "s" / "subagents" / "agent-c1.jsonl"
    spec = SimpleNamespace(definition=SimpleNamespace(name="Explore", source="built-in"), description="look",
                           tool_use_id="toolu_9", depth=2, parent_agent_id="agent-p1", background=False,
                           model_id="claude-haiku-4-5")
    write_agent_meta(path, agent_meta(spec))
    meta = json.loads((path.parent / "agent-c1.meta.json").read_text())
    assert meta == {"agentType": "Explore", "isBuiltIn": True, "description": "look", "toolUseId": "toolu_9",
                    "spawnDepth": 2, "parentAgentId": "p1", "requestShape": "foreground", "model": "claude-haiku-4-5"}
