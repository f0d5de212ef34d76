"""Transcripts in Claude Code's record format, written by a real agent run (no Ray): the
fields Claude Code writes on each record, compact JSON, ISO timestamps, the uuid chain."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from covey.agent.actor import AgentRunner
from covey.common.private_dirs import PrivateDirError
from covey.definitions.definition import AgentDefinition
from covey.events import CLAUDE_CODE_VERSION, AssistantEvent
from covey.model.scripted import ScriptedModel
from covey.runtime.spec import AgentSpec, RunSettings
from covey.transcripts.session_files import project_folder
from covey.transcripts.transcript import TranscriptWriter, agent_transcript, copy_transcript, git_branch, transcript_path

ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
COMMON = {"parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "type", "message",
          "uuid", "timestamp"}
"""The keys Claude Code writes on every user and assistant record."""
API_MESSAGE = {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}
FINAL = "The file says HELLO_FILE_CONTENT_42."


def read_model(project: Path) -> ScriptedModel:
    """Reads hello.txt, then answers with what it found."""
    return ScriptedModel.from_dict({"rules": [
        {"when": {"last_tool_result_contains": "HELLO_FILE_CONTENT_42"}, "reply": {"text": FINAL}},
        {"when": {}, "reply": {"text": "Reading it.", "tool_use": {"name": "Read", "input": {
            "file_path": str(project / "hello.txt")}}}},
    ]})


def make_project(tmp_path: Path, branch: str = "feature/transcripts") -> Path:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
    (project / "hello.txt").write_text("line one\nHELLO_FILE_CONTENT_42\n")
    return project


def make_spec(tmp_path: Path, project: Path, *, depth: int = 0, hooks: dict | None = None) -> AgentSpec:
    return AgentSpec(
        session_id=str(uuid.uuid4()), agent_id=f"agent-{uuid.uuid4().hex[:16]}", definition=AgentDefinition(name="t"),
        prompt="What does hello.txt say?", model=read_model(project), model_id="claude-test-1", cwd=str(project),
        tool_names=["Read"], transcript_dir=str(tmp_path / "transcripts"), depth=depth,
        settings=RunSettings(hooks=hooks, project_dir=str(project)),
    )


async def run(spec: AgentSpec) -> tuple[list[str], list[AssistantEvent]]:
    """Run the agent to its end: its transcript's lines and the assistant events it streamed."""
    runner = AgentRunner()
    await runner.start(spec, follow=True)
    events = [event async for event in runner.follow()]
    assert events[-1].status == "completed", events[-1]
    path = agent_transcript(spec)
    return path.read_text().splitlines(), [e for e in events if isinstance(e, AssistantEvent)]


@pytest.fixture
async def main_run(tmp_path):
    spec = make_spec(tmp_path, make_project(tmp_path))
    lines, events = await run(spec)
    return spec, lines, [json.loads(line) for line in lines], events


async def test_every_record_has_claude_codes_fields_and_value_types(main_run):
    spec, _, records, _ = main_run
    # One assistant record per block of a reply (Claude Code's: "Reading it." then the Read call).
    assert [r["type"] for r in records] == ["user", "assistant", "assistant", "user", "assistant"]
    for record in records:
        assert COMMON <= record.keys(), record.keys()
        assert record["isSidechain"] is False and "agentId" not in record  # the main agent's
        assert record["userType"] == "external" and record["sessionId"] == spec.session_id
        assert record["cwd"] == spec.cwd and record["gitBranch"] == "feature/transcripts"
        assert record["version"] == CLAUDE_CODE_VERSION and re.fullmatch(r"\d+\.\d+\.\d+", record["version"])
        assert ISO_MS.fullmatch(record["timestamp"]), record["timestamp"]
        assert uuid.UUID(record["uuid"]).version == 4
    prompt, _, _, results, _ = records
    assert prompt["message"] == {"role": "user", "content": "What does hello.txt say?"}
    assert results["message"]["content"][0]["type"] == "tool_result"


async def test_an_assistant_record_holds_the_api_message_and_its_request_id(main_run):
    _, _, records, _ = main_run
    for record in (r for r in records if r["type"] == "assistant"):
        message = record["message"]
        assert API_MESSAGE <= message.keys() and message["type"] == "message" and message["role"] == "assistant"
        assert message["id"].startswith("msg_") and message["model"] == "claude-test-1"
        assert {"input_tokens", "output_tokens"} <= message["usage"].keys()
        assert re.fullmatch(r"req_[A-Za-z0-9]+", record["requestId"])
    text, call = records[1]["message"], records[2]["message"]
    assert text["content"] == [{"type": "text", "text": "Reading it."}] and call["content"][0]["type"] == "tool_use"
    assert text["id"] == call["id"] and records[1]["requestId"] == records[2]["requestId"]  # one reply
    assert text["usage"] == call["usage"]  # the reply's, on each block as Claude Code records it
    # The reply's stop reason on its last block only (Claude Code writes null on each).
    assert (text["stop_reason"], call["stop_reason"], records[-1]["message"]["stop_reason"]) == (
        None, "tool_use", "end_turn")
    assert records[-1]["message"]["content"] == [{"type": "text", "text": FINAL}]


async def test_a_tool_result_record_carries_the_structured_result_and_its_assistant(main_run):
    spec, _, records, _ = main_run
    call, results = records[2], records[3]
    assert results["toolUseResult"]["type"] == "text"  # Claude Code's structured Read result
    assert results["toolUseResult"]["file"]["filePath"] == str(Path(spec.cwd) / "hello.txt")
    assert results["sourceToolAssistantUUID"] == call["uuid"]
    assert "toolUseResult" not in records[0] and "sourceToolAssistantUUID" not in records[0]


async def test_records_are_compact_json_lines_chained_by_uuid(main_run):
    _, lines, records, _ = main_run
    for line, record in zip(lines, records):
        assert line == json.dumps(record, separators=(",", ":"))  # no spaces, as Claude Code writes
    assert '"type":"assistant"' in lines[-1]
    assert records[0]["parentUuid"] is None
    assert all(later["parentUuid"] == earlier["uuid"] for earlier, later in zip(records, records[1:]))


async def test_a_record_and_its_stream_json_line_name_the_same_message(main_run):
    _, _, records, events = main_run
    assistant = [r for r in records if r["type"] == "assistant"]
    assert [(r["uuid"], r["timestamp"], r["requestId"]) for r in assistant] == [
        (e.uuid, e.timestamp, e.request_id) for e in events]
    assert all(e.wire()["request_id"] == r["requestId"] for e, r in zip(events, assistant))


async def test_a_sub_agents_records_are_a_sidechain_named_by_its_agent_id(tmp_path):
    spec = make_spec(tmp_path, make_project(tmp_path), depth=1)
    lines, _ = await run(spec)
    records = [json.loads(line) for line in lines]
    # Claude Code's agentId is the id its file is named by, without "agent-" (covey's ids keep it)
    assert records and all(r["isSidechain"] is True and r["agentId"] == spec.agent_id.removeprefix("agent-")
                           for r in records)
    assert all(r["sessionId"] == spec.session_id for r in records)  # the session's id, as Claude Code's


async def test_writer_leaves_out_unset_extra_fields_and_keeps_covey_ones(tmp_path):
    writer = TranscriptWriter(tmp_path / "t.jsonl", session_id="s", agent_id="agent-a", cwd=tmp_path)
    await writer.append("user", {"role": "user", "content": "hi"}, toolUseResult=None, coveyNote="kept")
    writer.close()
    record = json.loads((tmp_path / "t.jsonl").read_text())
    assert "toolUseResult" not in record and record["coveyNote"] == "kept"
    assert record["gitBranch"] == git_branch(tmp_path)


async def test_a_transcript_is_0600_in_0700_folders_covey_makes(tmp_path):
    path = transcript_path(tmp_path / "transcripts", "session-1", "agent-a", main=False)
    writer = TranscriptWriter(path, session_id="session-1", agent_id="agent-a")
    await writer.append("user", {"role": "user", "content": "a secret"})
    writer.close()
    assert [stat.S_IMODE(os.stat(p).st_mode) for p in (tmp_path / "transcripts", path.parent.parent, path.parent, path)
            ] == [0o700, 0o700, 0o700, 0o600]


async def test_an_older_covey_s_open_session_folder_and_transcript_are_tightened(tmp_path):
    folder = tmp_path / "session-1"
    folder.mkdir()
    os.chmod(folder, 0o755)
    (folder / "agent-a.jsonl").write_text("")
    os.chmod(folder / "agent-a.jsonl", 0o644)
    writer = TranscriptWriter.continuing(folder / "agent-a.jsonl", session_id="session-1", agent_id="agent-a")
    await writer.append("user", {"role": "user", "content": "more"})
    writer.close()
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder / "agent-a.jsonl").st_mode) == 0o600


async def test_a_session_folder_others_may_write_in_is_refused(tmp_path):
    folder = tmp_path / "session-1"
    folder.mkdir()
    os.chmod(folder, 0o777)
    writer = TranscriptWriter(folder / "agent-a.jsonl", session_id="session-1", agent_id="agent-a")
    with pytest.raises(PrivateDirError, match="transcript folder"):
        await writer.append("user", {"role": "user", "content": "a secret"})
    assert not (folder / "agent-a.jsonl").exists()


def test_a_forked_copy_is_0600_in_a_0700_folder(tmp_path):
    source = tmp_path / "a.jsonl"
    source.write_text('{"type":"user","uuid":"u1","sessionId":"s"}\n')
    dest = tmp_path / "fork" / "a.jsonl"
    assert copy_transcript(source, dest, session_id="s2") == 1
    assert stat.S_IMODE(os.stat(dest.parent).st_mode) == 0o700 and stat.S_IMODE(os.stat(dest).st_mode) == 0o600


# -- the git branch --------------------------------------------------------------


def test_git_branch_reads_head_as_claude_code_records_it(tmp_path):
    project = make_project(tmp_path, branch="main")
    (project / "src").mkdir()
    assert git_branch(project / "src") == "main"  # from a subdirectory: the repository's
    (project / ".git" / "HEAD").write_text("3f2a9c0d1e2b3c4d5e6f708192a3b4c5d6e7f809\n")
    assert git_branch(project) == "HEAD"  # detached


def test_git_branch_of_a_linked_worktree_reads_its_own_head(tmp_path):
    gitdir = tmp_path / "repo" / ".git" / "worktrees" / "wt"
    gitdir.mkdir(parents=True)
    (gitdir / "HEAD").write_text("ref: refs/heads/agent-branch\n")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {gitdir}\n")
    assert git_branch(worktree) == "agent-branch"


def test_git_branch_outside_a_repository_is_empty(tmp_path):
    assert git_branch(tmp_path) == ""


# -- a Claude Code Stop hook reads it --------------------------------------------

HOOKS = Path(__file__).parents[1] / "data" / "claude_files" / "hooks"


def stop_hook(command: str) -> dict:
    return {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}


@pytest.mark.parametrize("script", ["last_assistant.py", "last_assistant.sh"])
async def test_a_stop_hook_reading_transcript_path_finds_the_last_assistant_message(tmp_path, script):
    """The issue's case: a Stop hook that reads ``transcript_path`` when the agent stops finds
    the answer it stopped with (written before the hook runs), whichever way it parses."""
    out = tmp_path / "seen.txt"
    runner = f"{sys.executable} {HOOKS / script}" if script.endswith(".py") else f"sh {HOOKS / script}"
    spec = make_spec(tmp_path, make_project(tmp_path), hooks=stop_hook(f"{runner} {out}"))
    await run(spec)
    assert out.read_text() == FINAL


def test_the_hook_script_run_on_a_finished_transcript_prints_the_final_text(main_run):
    spec = main_run[0]
    path = agent_transcript(spec)
    payload = json.dumps({"session_id": spec.session_id, "transcript_path": str(path), "hook_event_name": "Stop"})
    done = subprocess.run([sys.executable, str(HOOKS / "last_assistant.py")], input=payload, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == FINAL


# -- Claude Code's own session reader reads it ----------------------------------


async def test_the_claude_agent_sdks_session_reader_reads_covey_transcripts_where_covey_writes_them(
        tmp_path, monkeypatch):
    """A main agent and its sub-agent, run as a session runs them (their transcripts in the project's
    folder of the config dir), read by the SDK's own functions, nothing copied."""
    import claude_agent_sdk as sdk

    project = make_project(tmp_path)
    folder = str(project_folder(tmp_path / "claude", project))
    main = make_spec(tmp_path, project).model_copy(update={"transcript_dir": folder})
    child = make_spec(tmp_path, project, depth=1).model_copy(update={
        "session_id": main.session_id, "transcript_dir": folder, "tool_use_id": "toolu_launch",
        "parent_agent_id": main.agent_id})
    await run(main)
    await run(child)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))

    messages = sdk.get_session_messages(main.session_id, directory=str(project))
    assert [m.type for m in messages] == ["user", "assistant", "assistant", "user", "assistant"]  # a record a block
    assert messages[-1].message["content"] == [{"type": "text", "text": FINAL}]
    info = sdk.get_session_info(main.session_id, directory=str(project))
    assert info.first_prompt == "What does hello.txt say?" and info.git_branch == "feature/transcripts"
    assert info.cwd == str(project)
    assert [s.session_id for s in sdk.list_sessions(directory=str(project))] == [main.session_id]
    (agent_id,) = sdk.list_subagents(main.session_id, directory=str(project))
    assert f"agent-{agent_id}" == child.agent_id  # Claude Code's file name drops the "agent-" covey's id keeps
    sub = sdk.get_subagent_messages(main.session_id, agent_id, directory=str(project))
    assert sub[-1].message["content"] == [{"type": "text", "text": FINAL}]
    assert {m.parent_tool_use_id for m in sub} == {"toolu_launch"}  # from the .meta.json beside it


def test_a_compacted_claude_code_transcript_resumes_from_its_summary():
    from covey.transcripts.transcript import rebuild_history

    path = Path(__file__).parents[1] / "data/claude_files/transcripts/claude-code-compacted.jsonl"
    history = rebuild_history(path)
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert history[0]["content"][0]["text"].startswith("This session is being continued")
    assert "Refactor tinyparse" not in str(history)  # before the boundary: in the summary only
    assert history[-1]["content"] == [{"type": "text", "text": "Good, now update the tests."}]


async def test_a_sub_agents_metadata_is_mirrored_at_its_start_and_again_finished_as_claude_codes(tmp_path):
    from covey.events import TranscriptMirror

    spec = make_spec(tmp_path, make_project(tmp_path), depth=1).model_copy(update={
        "tool_use_id": "toolu_launch", "description": "read it", "settings": RunSettings(session_mirror=True)})
    runner = AgentRunner()
    await runner.start(spec, follow=True)
    mirrored = [e for e in [event async for event in runner.follow()] if isinstance(e, TranscriptMirror)]
    path = agent_transcript(spec)
    assert {e.filePath for e in mirrored} == {str(path)}
    entries = [entry for e in mirrored for entry in e.entries]
    meta = {"type": "agent_metadata", "agentType": "t", "isBuiltIn": True, "description": "read it",
            "toolUseId": "toolu_launch", "spawnDepth": 1, "requestShape": "foreground", "model": "claude-test-1"}
    assert entries[0] == meta and entries[-1] == {**meta, "finished": True}  # the bundled CLI's shape
    assert all(entry.get("type") != "agent_metadata" for entry in entries[1:-1])
    assert [json.loads(line) for line in path.read_text().splitlines()] == entries[1:-1]  # the sidecar is no record
    sidecar = json.loads(path.with_name(path.name.removesuffix(".jsonl") + ".meta.json").read_text())
    assert sidecar == {key: value for key, value in entries[-1].items() if key != "type"}
