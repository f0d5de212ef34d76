"""Resume, continue and fork (covey/transcripts/resume.py) against real files and real git worktrees; no Ray."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from git import Repo

from covey.transcripts.session_files import project_folder
from covey.transcripts.transcript import TranscriptWriter, read_transcript, rebuild_history, record_time_s
from covey.transcripts.resume import (
    ResumeError, SessionRecord, find_resume, fork_point, read_record, record_session, session_exists, touch_session,
    validate_session_id,
)

AGENT = "agent-main0000000000"
HELLO = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}]


@pytest.fixture
def tdir(tmp_path) -> Path:
    return tmp_path / "transcripts"


@pytest.fixture
def project(tmp_path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def _write(path: Path, session_id: str, messages: list[dict], *, agent_id: str = AGENT) -> None:
    writer = TranscriptWriter(path, session_id=session_id, agent_id=agent_id)

    async def write() -> None:
        for message in messages:
            await writer.append(message["role"], message)

    asyncio.run(write())
    writer.close()


def _session(tdir: Path, cwd: Path, *, messages=HELLO, now_s: float = 100.0, worktree: Path | None = None,
             session_id: str | None = None) -> SessionRecord:
    record = SessionRecord.new(tdir, session_id=session_id or str(uuid.uuid4()), main_agent_id=AGENT, cwd=cwd,
                               worktree=worktree, model_id="claude-sonnet-4-5", permission_mode="acceptEdits",
                               now_s=now_s)
    _write(Path(record.transcript), record.session_id, messages)
    record_session(tdir, record)
    return record


def _refused(match: str, *names: str, **where) -> ResumeError:
    with pytest.raises(ResumeError, match=match) as caught:
        find_resume(where.pop("tdir"), **where)
    for name in names:  # each refusal names the session and the path it is about
        assert repr(name) in str(caught.value), (name, str(caught.value))
    return caught.value


# -- the record ------------------------------------------------------------------


def _folder(tdir: Path, project: Path) -> Path:
    """Claude Code's folder for the project: ``projects/`` and its real path, ``-`` for each other character."""
    return tdir / "projects" / os.path.realpath(project).replace("/", "-").replace("_", "-").replace(".", "-")


def test_a_record_holds_real_paths_and_is_written_atomically_beside_the_transcripts(tdir, tmp_path, project):
    (tmp_path / "link").symlink_to(project)
    record = _session(tdir, tmp_path / "link")
    folder = _folder(tdir, project)
    path = folder / record.session_id / "session.json"
    assert record.cwd == os.path.realpath(project) and record.forked_from is None
    assert record.transcript == str(folder / f"{record.session_id}.jsonl")  # where Claude Code keeps a session
    assert read_record(tdir, record.session_id) == record
    assert json.loads(path.read_text())["permission_mode"] == "acceptEdits"
    assert sorted(p.name for p in folder.iterdir()) == [record.session_id, f"{record.session_id}.jsonl"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["session.json"]  # no temp left
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_a_relative_transcript_dir_is_recorded_as_an_absolute_path(tmp_path, project, monkeypatch):
    monkeypatch.chdir(tmp_path)
    record = _session(Path("transcripts"), project)
    assert record.transcript == str(_folder(tmp_path / "transcripts", project) / f"{record.session_id}.jsonl")
    monkeypatch.chdir(project)
    assert find_resume(tmp_path / "transcripts", session_id=record.session_id).record == record


def test_touch_updates_only_the_time_and_keeps_the_record_whole(tdir, project):
    record = _session(tdir, project, now_s=100.0)
    touched = touch_session(tdir, record.session_id, now_s=250.0)
    assert touched == record.model_copy(update={"updated_s": 250.0}) == read_record(tdir, record.session_id)
    assert touched.created_s == 100.0


# -- resume and continue -----------------------------------------------------------


def test_resume_by_id_rebuilds_the_main_conversation(tdir, project):
    record = _session(tdir, project)
    point = find_resume(tdir, session_id=record.session_id.upper())  # any case
    assert point.record == record and point.transcript == Path(record.transcript)
    assert point.history == rebuild_history(record.transcript)
    assert point.history == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}, HELLO[1]]
    assert point.last_uuid == list(read_transcript(point.transcript))[-1]["uuid"]


def test_continue_takes_the_most_recently_updated_session_of_that_directory_only(tdir, tmp_path, project):
    other = tmp_path / "other"
    other.mkdir()
    older = _session(tdir, project, now_s=100.0)
    newer = _session(tdir, project, now_s=200.0)
    _session(tdir, other, now_s=300.0)  # the latest of all, but another directory's
    assert find_resume(tdir, continue_in=project).record.session_id == newer.session_id
    touch_session(tdir, older.session_id, now_s=400.0)
    assert find_resume(tdir, continue_in=project).record.session_id == older.session_id
    (tmp_path / "link").symlink_to(project)  # the same directory under another name
    assert find_resume(tdir, continue_in=tmp_path / "link").record.session_id == older.session_id


def test_continue_in_a_directory_without_a_conversation_says_so_and_where_it_looked(tdir, tmp_path, project):
    _session(tdir, project)
    empty = tmp_path / "empty"
    empty.mkdir()
    _refused("No conversation found to continue in", str(empty), str(tdir), tdir=tdir, continue_in=empty)


def test_continue_through_a_symlink_whose_target_changed_does_not_adopt_the_old_directory(tdir, tmp_path, project):
    _session(tdir, project)
    moved = tmp_path / "moved"
    moved.mkdir()
    (tmp_path / "link").symlink_to(project)
    assert find_resume(tdir, continue_in=tmp_path / "link").record.cwd == str(project.resolve())
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(moved)
    _refused("No conversation found to continue in", str(moved.resolve()), tdir=tdir, continue_in=tmp_path / "link")


def test_a_transcript_with_a_torn_last_line_resumes_from_its_complete_records(tdir, project):
    record = _session(tdir, project)
    with open(record.transcript, "a", encoding="utf-8") as handle:
        handle.write('{"uuid": "torn", "type": "user", "message": {"role": "user", "cont')
    point = find_resume(tdir, session_id=record.session_id)
    assert point.history[-1] == HELLO[1] and point.last_uuid != "torn"
    writer = TranscriptWriter.continuing(point.transcript, session_id=record.session_id, agent_id=AGENT)
    assert writer.last_uuid == point.last_uuid
    asyncio.run(writer.append("user", {"role": "user", "content": "again"}))
    writer.close()
    records = list(read_transcript(point.transcript))  # the new record is on a line of its own, chained
    assert records[-1]["parentUuid"] == point.last_uuid and records[-1]["message"]["content"] == "again"
    assert find_resume(tdir, session_id=record.session_id).history[-1]["content"] == [
        {"type": "text", "text": "again"}]


# -- refusals ----------------------------------------------------------------------


def test_an_unknown_session_is_refused_naming_where_it_looked(tdir):
    missing = str(uuid.uuid4())
    _refused("No session", missing, str(tdir / missing), tdir=tdir, session_id=missing)


def test_a_missing_or_unreadable_record_is_refused_naming_the_file(tdir, project):
    record = _session(tdir, project)
    path = _folder(tdir, project) / record.session_id / "session.json"
    path.write_text('{"session_id": "trunc')
    _refused("is unreadable", record.session_id, str(path), tdir=tdir, session_id=record.session_id)
    path.unlink()  # a transcript alone names its directory in its records' cwd (tests/transcripts/test_resume_rebuild.py)
    _refused("has no session.json beside it and names no directory", record.session_id, record.transcript,
             tdir=tdir, session_id=record.session_id)


def test_a_missing_or_unreadable_transcript_is_refused_naming_the_file(tdir, project):
    record = _session(tdir, project)
    Path(record.transcript).unlink()
    os.mkfifo(record.transcript)  # never opened for reading: that would block for ever
    _refused("is unreadable .*FIFO", record.session_id, record.transcript, tdir=tdir, session_id=record.session_id)
    Path(record.transcript).unlink()
    _refused("transcript .* is missing", record.session_id, record.transcript, tdir=tdir,
             session_id=record.session_id)


def test_a_transcript_with_no_complete_message_is_refused(tdir, project):
    record = _session(tdir, project, messages=[])
    Path(record.transcript).write_text('{"uuid": "a", "message": {"role": "user", "con')  # only a torn line
    _refused("holds no complete message", record.session_id, record.transcript, tdir=tdir,
             session_id=record.session_id)


def test_a_transcript_of_another_session_is_refused(tdir, project):
    record = _session(tdir, project)
    _write(Path(record.transcript), str(uuid.uuid4()), [{"role": "user", "content": "someone else's"}])
    error = _refused("belongs to session", record.session_id, record.transcript, tdir=tdir,
                     session_id=record.session_id)
    assert "record 3" in str(error)


def test_a_project_directory_that_is_gone_is_refused(tdir, project):
    record = _session(tdir, project)
    shutil.rmtree(project)
    _refused("project directory .* no longer exists", record.session_id, record.cwd, tdir=tdir,
             session_id=record.session_id)


def test_a_project_directory_that_now_resolves_elsewhere_is_refused(tdir, tmp_path, project):
    """The recorded real path became a symlink to another directory: not the place the session ran."""
    record = _session(tdir, project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(project)
    project.symlink_to(elsewhere)
    error = _refused("now resolves to", record.session_id, record.cwd, tdir=tdir, session_id=record.session_id)
    assert repr(str(elsewhere.resolve())) in str(error) and error.path == record.cwd


# -- worktrees ---------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path) -> Repo:
    repo = Repo.init(tmp_path / "repo")
    (tmp_path / "repo" / "README.md").write_text("hello\n")
    repo.index.add(["README.md"])
    repo.index.commit("initial")
    yield repo
    repo.close()


@pytest.fixture
def worktree(repo, tmp_path) -> Path:
    path = tmp_path / "wt"
    repo.git.worktree("add", "-b", "covey/main", str(path))
    return path


def test_a_session_in_a_live_worktree_resumes(tdir, repo, worktree):
    record = _session(tdir, Path(repo.working_tree_dir), worktree=worktree)
    assert record.worktree == str(worktree.resolve())
    assert record.worktree_git_dir == os.path.realpath(repo.common_dir)
    assert find_resume(tdir, session_id=record.session_id).record.worktree == record.worktree


def test_a_removed_worktree_is_refused(tdir, repo, worktree):
    record = _session(tdir, Path(repo.working_tree_dir), worktree=worktree)
    repo.git.worktree("remove", str(worktree))
    _refused("worktree .* no longer exists", record.session_id, record.worktree, tdir=tdir,
             session_id=record.session_id)


def test_a_worktree_that_is_now_a_plain_directory_is_refused(tdir, repo, worktree):
    record = _session(tdir, Path(repo.working_tree_dir), worktree=worktree)
    repo.git.worktree("remove", str(worktree))
    worktree.mkdir()
    (worktree / "README.md").write_text("hello\n")
    _refused("is no longer a git worktree", record.session_id, record.worktree, tdir=tdir,
             session_id=record.session_id)


def test_a_worktree_path_now_holding_another_repository_is_refused(tdir, repo, worktree):
    record = _session(tdir, Path(repo.working_tree_dir), worktree=worktree)
    repo.git.worktree("remove", str(worktree))
    Repo.init(worktree).close()
    _refused("no longer a worktree of the repository", record.session_id, record.worktree, tdir=tdir,
             session_id=record.session_id)


def test_a_worktree_git_pruned_is_refused(tdir, repo, worktree, tmp_path):
    """Moved by hand and moved back after git pruned it: its .git file points at nothing."""
    record = _session(tdir, Path(repo.working_tree_dir), worktree=worktree)
    worktree.rename(tmp_path / "away")
    repo.git.worktree("prune")
    (tmp_path / "away").rename(worktree)
    _refused("is no longer a git worktree", record.session_id, record.worktree, tdir=tdir,
             session_id=record.session_id)


def test_a_copy_left_where_a_worktree_was_moved_from_is_refused(tdir, repo, worktree, tmp_path):
    """Same repository, but git lists the worktree elsewhere now: the copy is not the worktree."""
    record = _session(tdir, Path(repo.working_tree_dir), worktree=worktree)
    repo.git.worktree("move", str(worktree), str(tmp_path / "moved"))
    shutil.copytree(tmp_path / "moved", worktree)
    _refused("no longer listed", record.session_id, record.worktree, tdir=tdir, session_id=record.session_id)


def test_a_worktree_that_is_not_a_git_worktree_cannot_be_recorded(tdir, project):
    with pytest.raises(ResumeError, match="is not the root of a git worktree"):
        SessionRecord.new(tdir, session_id=str(uuid.uuid4()), main_agent_id=AGENT, cwd=project, worktree=project)


def test_a_worktree_without_a_recorded_repository_is_refused(tdir, repo, worktree):
    record = _session(tdir, Path(repo.working_tree_dir), worktree=worktree)
    record_session(tdir, record.model_copy(update={"worktree_git_dir": None}))
    _refused("no recorded repository", record.session_id, record.worktree, tdir=tdir, session_id=record.session_id)


# -- fork --------------------------------------------------------------------------


def test_a_fork_continues_the_same_history_under_its_own_id_and_resumes_by_that_id(tdir, project):
    record = _session(tdir, project)
    original_bytes = Path(record.transcript).read_bytes()
    point = find_resume(tdir, session_id=record.session_id)
    new_id = str(uuid.uuid4())
    fork = fork_point(point, new_id.upper())
    assert fork.record.session_id == new_id and fork.record.forked_from == record.session_id
    assert fork.history == point.history and fork.last_uuid == point.last_uuid
    assert fork.transcript == _folder(tdir, project) / f"{new_id}.jsonl" != point.transcript
    assert (fork.record.cwd, fork.record.model_id, fork.record.permission_mode) == (
        record.cwd, record.model_id, record.permission_mode)
    assert Path(record.transcript).read_bytes() == original_bytes  # the original is not written to
    again = find_resume(tdir, session_id=new_id)
    assert again.record == fork.record and again.history == point.history
    assert {r["sessionId"] for r in read_transcript(fork.transcript)} == {new_id}



# -- transcripts an older covey wrote ------------------------------------------------

OLD = Path(__file__).parents[1] / "data" / "claude_files" / "transcripts" / "covey-0.1-main.jsonl"
"""Spaced JSON, ``timestamp`` in epoch seconds, a torn last line (its README says more)."""
OLD_SESSION, OLD_AGENT, OLD_LAST = ("5b0e3c1a-7d2f-4e8b-9a61-0c4d2e8f1a37", "agent-0f3e9a7c5b2d4e61",
                                    "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f")


def _old_session(tdir: Path, project: Path) -> SessionRecord:
    record = SessionRecord.new(tdir, session_id=OLD_SESSION, main_agent_id=OLD_AGENT, cwd=project, now_s=100.0)
    Path(record.transcript).parent.mkdir(parents=True)
    shutil.copy(OLD, record.transcript)
    record_session(tdir, record)
    return record


def test_a_session_an_older_covey_wrote_resumes_with_its_whole_conversation(tdir, project):
    _old_session(tdir, project)
    point = find_resume(tdir, session_id=OLD_SESSION)
    assert [m["role"] for m in point.history] == ["user", "assistant", "user", "assistant"]
    assert point.history[1]["content"][1] == {"type": "tool_use", "id": "toolu_01", "name": "Read",
                                              "input": {"file_path": "/srv/app/.env"}}
    assert point.history[-1]["content"] == [{"type": "text", "text": "It listens on port 8123."}]
    assert point.last_uuid == OLD_LAST
    assert [record_time_s(r) for r in read_transcript(point.transcript)][:2] == [1764500000.25, 1764500001.75]


def test_an_older_transcript_continues_in_claude_codes_format_chained_to_its_last_record(tdir, project):
    point = find_resume(tdir, session_id=_old_session(tdir, project).session_id)
    writer = TranscriptWriter.continuing(point.transcript, session_id=OLD_SESSION, agent_id=OLD_AGENT, cwd=project)
    asyncio.run(writer.append("user", {"role": "user", "content": "And in production?"}))
    writer.close()
    lines = point.transcript.read_text().splitlines()
    new = json.loads(lines[-1])
    assert lines[-1] == json.dumps(new, separators=(",", ":")) and new["parentUuid"] == OLD_LAST
    assert new["userType"] == "external" and new["timestamp"].endswith("Z") and record_time_s(new) > 1764500004.75
    history = find_resume(tdir, session_id=OLD_SESSION).history  # old and new records read as one conversation
    assert len(history) == 5 and history[-1]["content"] == [{"type": "text", "text": "And in production?"}]


def test_a_fork_of_an_older_session_is_written_compact_keeping_its_records(tdir, project):
    point = find_resume(tdir, session_id=_old_session(tdir, project).session_id)
    fork = fork_point(point, str(uuid.uuid4()))
    lines = fork.transcript.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert all(line == json.dumps(r, separators=(",", ":")) for line, r in zip(lines, records))
    assert [r["uuid"] for r in records][-1] == OLD_LAST and records[0]["timestamp"] == 1764500000.25
    assert fork.history == point.history

# -- sessions in the folder an older covey kept them in --------------------------------


def _legacy_session(legacy: Path, project: Path, *, now_s: float = 100.0) -> str:
    """A session as an older covey left it: ``<legacy>/<session>/`` with its record, the main
    agent's transcript (covey 0.1's format) and a sub-agent's, each named by its agent id."""
    session_id = str(uuid.uuid4())
    folder = legacy / session_id
    folder.mkdir(parents=True)
    old = OLD.read_text().replace(OLD_SESSION, session_id)
    (folder / f"{OLD_AGENT}.jsonl").write_text(old)
    _write(folder / "agent-child00000000000.jsonl", session_id, [{"role": "user", "content": "child's task"}],
           agent_id="agent-child00000000000")
    (folder / "session.json").write_text(json.dumps({
        "session_id": session_id, "main_agent_id": OLD_AGENT, "transcript": str(folder / f"{OLD_AGENT}.jsonl"),
        "cwd": os.path.realpath(project), "model_id": "claude-sonnet-4-5", "permission_mode": "default",
        "created_s": now_s, "updated_s": now_s}, indent=2))
    return session_id


def test_a_session_in_the_old_folder_resumes_and_moves_where_claude_code_keeps_sessions(tmp_path, project,
                                                                                       monkeypatch):
    import claude_agent_sdk as sdk

    from covey.transcripts.session_files import SessionRoots

    home = tmp_path / "home"
    roots = SessionRoots.of(None, env={}, home=home)  # a user's: ~/.claude, and ~/.covey/transcripts before
    session_id = _legacy_session(home / ".covey" / "transcripts", project)
    assert session_exists(roots, session_id)

    point = find_resume(roots, session_id=session_id)
    assert [m["role"] for m in point.history] == ["user", "assistant", "user", "assistant"]
    assert point.last_uuid == OLD_LAST
    folder = project_folder(home / ".claude", project)
    assert point.transcript == folder / f"{session_id}.jsonl" == Path(point.record.transcript)
    assert (folder / session_id / "subagents" / "agent-child00000000000.jsonl").exists()
    assert read_record(roots, session_id) == point.record  # the record is beside them now
    assert not (home / ".covey" / "transcripts" / session_id).exists()  # moved, not copied
    again = find_resume(roots, session_id=session_id)  # the next resume finds it where it is now
    assert again.history == point.history and again.transcript == point.transcript

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))  # and the SDK's readers see it
    assert len(sdk.get_session_messages(session_id, directory=str(project))) == 4
    assert sdk.list_subagents(session_id, directory=str(project)) == ["child00000000000"]


def test_continue_finds_a_session_in_the_old_folder_when_it_is_the_latest(tdir, project):
    newer_old = _legacy_session(tdir, project, now_s=300.0)  # a transcript_dir: an older covey wrote in it too
    _session(tdir, project, now_s=200.0)
    assert find_resume(tdir, continue_in=project).record.session_id == newer_old
    assert find_resume(tdir, continue_in=project).transcript == _folder(tdir, project) / f"{newer_old}.jsonl"


def test_an_old_session_that_cannot_be_resumed_is_left_where_it_is(tdir, project):
    session_id = _legacy_session(tdir, project)
    shutil.rmtree(project)
    _refused("project directory .* no longer exists", session_id, tdir=tdir, session_id=session_id)
    assert (tdir / session_id / f"{OLD_AGENT}.jsonl").exists() and not (tdir / "projects").exists()


def test_a_move_cut_short_is_finished_by_the_next_resume(tdir, project):
    session_id = _legacy_session(tdir, project)
    folder = _folder(tdir, project)
    (folder / session_id / "subagents").mkdir(parents=True)  # the sub-agent's moved, then covey died
    (tdir / session_id / "agent-child00000000000.jsonl").rename(
        folder / session_id / "subagents" / "agent-child00000000000.jsonl")
    point = find_resume(tdir, session_id=session_id)
    assert point.transcript == folder / f"{session_id}.jsonl" and len(point.history) == 4
    assert not (tdir / session_id).exists()


def test_a_fork_into_an_existing_session_is_refused(tdir, project):
    record = _session(tdir, project)
    taken = _session(tdir, project)
    point = find_resume(tdir, session_id=record.session_id)
    with pytest.raises(ResumeError, match="already exists") as caught:
        fork_point(point, taken.session_id)
    assert repr(str(_folder(tdir, project) / taken.session_id)) in str(caught.value)


# -- ids ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "not-a-uuid", "", "12345678-1234-1234-1234-12345678901", "12345678123412341234123456789012", "../../etc",
    " 12345678-1234-1234-1234-123456789012",
])
def test_an_invalid_session_id_is_refused(text, tdir):
    with pytest.raises(ResumeError, match="Invalid session ID .* Must be a valid UUID."):
        validate_session_id(text)
    with pytest.raises(ResumeError, match="Invalid session ID"):
        find_resume(tdir, session_id=text)


@pytest.mark.parametrize("value", [None, 123, ["12345678-1234-1234-1234-123456789012"]])
def test_a_session_id_that_is_not_text_is_refused_as_invalid(value):
    with pytest.raises(ResumeError, match="Invalid session ID"):
        validate_session_id(value)


def test_find_resume_takes_exactly_one_of_an_id_and_a_directory(tdir, project):
    with pytest.raises(ValueError, match="exactly one"):
        find_resume(tdir)
    with pytest.raises(ValueError, match="exactly one"):
        find_resume(tdir, session_id="12345678-1234-1234-1234-123456789012", continue_in=project)


def test_a_record_takes_only_a_uuid_and_keeps_it_lowercase(project):
    fields = dict(main_agent_id=AGENT, transcript="/t/a.jsonl", cwd=str(project), created_s=1.0, updated_s=1.0)
    assert SessionRecord(session_id="A1B2C3D4-E5F6-4789-ABCD-EF0123456789", **fields).session_id == (
        "a1b2c3d4-e5f6-4789-abcd-ef0123456789")
    with pytest.raises(ValueError, match="is not a UUID"):
        SessionRecord(session_id="../elsewhere", **fields)


def test_a_session_id_is_normalised_to_lowercase_and_exists_once_anything_of_it_is_on_disk(tdir, project):
    upper = "A1B2C3D4-E5F6-4789-ABCD-EF0123456789"
    assert validate_session_id(upper) == upper.lower()
    assert not session_exists(tdir, upper)
    (tdir / upper.lower()).mkdir(parents=True)  # transcripts without a record still take the id
    assert session_exists(tdir, upper)
    assert session_exists(tdir, _session(tdir, project).session_id)


def test_resume_loads_neither_ray_nor_the_session_nor_the_service():
    code = "import sys, covey.transcripts.resume; print(sorted(m for m in sys.modules if m == 'ray' or m.startswith(" \
           "('ray.', 'covey.session', 'covey.service', 'covey.cli.main'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
