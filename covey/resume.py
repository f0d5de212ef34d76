"""Finding a session to resume, verified before it is adopted (docs/resume.md).

Each session keeps ``<transcript_dir>/<session_id>/session.json`` beside its
transcripts: who its main agent is, where it ran (real paths), its model and
permission mode. ``find_resume`` reads it back for ``--resume ID`` or
``--continue`` and checks that the place is still the same place: a directory or
worktree whose realpath or repository can no longer be verified is refused, not
silently adopted (SPEC 11). Nothing here starts a process: resume rebuilds the
main conversation, never the agents, shells or sockets that were running.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from covey.agents.transcript import (
    DEFAULT_DIR, copy_transcript, last_uuid, read_transcript, rebuild_history, transcript_path,
)
from covey.errors import UserError
from covey.permissions.modes import PermissionMode
from covey.private_dirs import private_dir

RECORD_NAME = "session.json"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


class ResumeError(UserError):
    """A session cannot be resumed as asked; the message names the session id and the path."""

    def __init__(self, message: str, session_id: str | None = None, path: str | None = None) -> None:
        super().__init__(message, session_id, path)
        self.session_id = session_id
        self.path = path
        """The file or directory the refusal is about."""

    def __str__(self) -> str:
        return self.args[0]


class SessionRecord(BaseModel):
    """What a session needs to be resumed, beside its transcripts; build one with ``SessionRecord.new``."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    main_agent_id: str
    transcript: str
    """The main agent's transcript."""
    cwd: str
    """Real path of the session's project directory; ``--continue`` matches on it."""
    worktree: str | None = None
    """Real path of a git worktree the main agent worked in, if any."""
    worktree_git_dir: str | None = None
    """Real path of that worktree's shared git directory: which repository it belongs to."""
    model_id: str | None = None
    permission_mode: PermissionMode | None = None
    created_s: float
    """Epoch seconds."""
    updated_s: float
    """Epoch seconds of the last ``touch_session``: ``--continue`` takes the latest."""
    forked_from: str | None = None
    """The session this one was forked from (``--fork-session``)."""

    @field_validator("session_id", "forked_from")
    @classmethod
    def _a_uuid(cls, value: str | None) -> str | None:
        # Lowercase on the way in: the id is also the directory name, which lookups build from it.
        if value is not None and not _UUID.fullmatch(value):
            raise ValueError(f"{value!r} is not a UUID")
        return value.lower() if value is not None else None

    @classmethod
    def new(cls, transcript_dir: str | os.PathLike | None, *, session_id: str, main_agent_id: str,
            cwd: str | os.PathLike, worktree: str | os.PathLike | None = None, model_id: str | None = None,
            permission_mode: PermissionMode | None = None, now_s: float | None = None) -> SessionRecord:
        """A record for a session starting now: real paths, and the worktree's repository read from git."""
        session_id = validate_session_id(session_id)
        now_s = time.time() if now_s is None else now_s
        real_worktree = os.path.realpath(worktree) if worktree is not None else None
        return cls(
            session_id=session_id, main_agent_id=main_agent_id, cwd=os.path.realpath(cwd),
            transcript=str(transcript_path(_root(transcript_dir), session_id, main_agent_id)),
            worktree=real_worktree, worktree_git_dir=_git_dir_of(real_worktree, session_id) if real_worktree else None,
            model_id=model_id, permission_mode=permission_mode, created_s=now_s, updated_s=now_s,
        )


class ResumePoint(BaseModel):
    """A verified session, ready to continue: its record, its main transcript and conversation."""

    model_config = ConfigDict(frozen=True)

    record: SessionRecord
    transcript_dir: Path
    transcript: Path
    """The main agent's transcript; append to it with ``TranscriptWriter.continuing``."""
    history: list[dict[str, Any]]
    """Messages API messages: the main agent's conversation before the next user message."""
    last_uuid: str | None
    """The last record of the transcript, which the next one chains to."""


# -- ids -------------------------------------------------------------------------


def validate_session_id(text: str) -> str:
    """A session id as given to ``--session-id`` / ``--resume``: a UUID (any case), lowercased."""
    if not isinstance(text, str) or not _UUID.fullmatch(text):
        raise ResumeError(f"Invalid session ID {text!r}. Must be a valid UUID.", str(text), None)
    return text.lower()


def session_exists(transcript_dir: str | os.PathLike | None, session_id: str) -> bool:
    """Whether anything of this session is on disk (its record or any transcript): a new
    session must not take its id, or it would append to another conversation's files."""
    return _session_dir(transcript_dir, validate_session_id(session_id)).exists()


# -- the record on disk --------------------------------------------------------


def record_session(transcript_dir: str | os.PathLike | None, record: SessionRecord) -> Path:
    """Write ``session.json`` atomically (a reader sees the old record or the new one, never half);
    not fsynced, so it costs a small write and a rename: cheap enough for every turn end."""
    path = _session_dir(transcript_dir, record.session_id) / RECORD_NAME
    private_dir(path.parent, "transcript folder")
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{RECORD_NAME}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(record.model_dump_json(indent=2))
        os.replace(temp, path)
    finally:
        Path(temp).unlink(missing_ok=True)
    return path


def touch_session(transcript_dir: str | os.PathLike | None, session_id: str, *,
                  now_s: float | None = None) -> SessionRecord:
    """Mark the session as used now (``--continue`` takes the most recently updated one)."""
    record = read_record(transcript_dir, session_id)
    touched = record.model_copy(update={"updated_s": time.time() if now_s is None else now_s})
    record_session(transcript_dir, touched)
    return touched


def read_record(transcript_dir: str | os.PathLike | None, session_id: str) -> SessionRecord:
    """The session's record; ``ResumeError`` naming where it looked if it is missing or unreadable."""
    session_id = validate_session_id(session_id)
    path = _session_dir(transcript_dir, session_id) / RECORD_NAME
    if not path.parent.is_dir():
        raise ResumeError(f"No session {session_id!r} found: there is no {str(path.parent)!r}.",
                          session_id, str(path.parent))
    try:
        record = SessionRecord.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise ResumeError(f"Session {session_id!r} cannot be resumed: its record {str(path)!r} is missing.",
                          session_id, str(path)) from None
    except (OSError, ValidationError) as e:
        raise ResumeError(f"Session {session_id!r} cannot be resumed: its record {str(path)!r} is unreadable "
                          f"({_reason(e)}).", session_id, str(path)) from None
    if record.session_id != session_id:
        raise ResumeError(f"Session {session_id!r} cannot be resumed: its record {str(path)!r} is of session "
                          f"{record.session_id!r}.", session_id, str(path))
    return record


# -- finding and verifying -------------------------------------------------------


def find_resume(transcript_dir: str | os.PathLike | None, *, session_id: str | None = None,
                continue_in: str | os.PathLike | None = None) -> ResumePoint:
    """The session to resume: ``session_id`` (``--resume ID``), or the most recently updated
    session whose project directory is ``realpath(continue_in)`` (``--continue``); verified
    (its directory, worktree and transcript) before it is returned."""
    if (session_id is None) == (continue_in is None):
        raise ValueError("find_resume takes exactly one of session_id and continue_in")
    if continue_in is not None:
        session_id = _latest_in(transcript_dir, continue_in)
    record = read_record(transcript_dir, session_id)
    _check_place(record)
    transcript = Path(record.transcript)
    history, last = _history(record, transcript)
    return ResumePoint(record=record, transcript_dir=_root(transcript_dir), transcript=transcript,
                       history=history, last_uuid=last)


def _latest_in(transcript_dir: str | os.PathLike | None, cwd: str | os.PathLike) -> str:
    root, real = _root(transcript_dir), os.path.realpath(cwd)
    best: SessionRecord | None = None
    for path in root.glob(f"*/{RECORD_NAME}"):
        try:
            record = SessionRecord.model_validate_json(path.read_bytes())
        except (OSError, ValidationError):
            continue  # an unreadable record says nothing about its directory; another session's problem
        if record.cwd == real and (best is None or record.updated_s > best.updated_s):
            best = record
    if best is None:
        raise ResumeError(f"No conversation found to continue in {real!r} (looked in {str(root)!r}).", None, real)
    return best.session_id


def _check_place(record: SessionRecord) -> None:
    """Refuse a directory or worktree that is no longer verifiably where the session ran."""
    sid = record.session_id
    if problem := _dir_problem(record.cwd, "project directory"):
        raise ResumeError(f"Session {sid!r} cannot be resumed: {problem}", sid, record.cwd)
    if record.worktree is not None and (problem := _worktree_problem(record)):
        raise ResumeError(f"Session {sid!r} cannot be resumed: {problem}", sid, record.worktree)


def _dir_problem(path: str, what: str) -> str | None:
    if not os.path.isdir(path):
        return f"its {what} {path!r} no longer exists."
    if (now := os.path.realpath(path)) != path:
        return f"its {what} {path!r} now resolves to {now!r}."
    return None


def _worktree_problem(record: SessionRecord) -> str | None:
    from git import InvalidGitRepositoryError, NoSuchPathError, Repo

    path = record.worktree
    if problem := _dir_problem(path, "worktree"):
        return problem
    if record.worktree_git_dir is None:
        return f"its worktree {path!r} has no recorded repository to verify it against."
    try:
        with Repo(path) as repo:  # not searching parents: the worktree's own root or nothing
            root = os.path.realpath(repo.working_tree_dir or "")
            git_dir = os.path.realpath(repo.common_dir)
            listed = _listed_worktrees(repo)
    except (InvalidGitRepositoryError, NoSuchPathError):
        return f"its worktree {path!r} is no longer a git worktree."
    if root != path or git_dir != record.worktree_git_dir:
        return f"its worktree {path!r} is no longer a worktree of the repository at {record.worktree_git_dir!r}."
    if path not in listed:
        return f"its worktree {path!r} is no longer listed by its repository (git worktree list)."
    return None


def _listed_worktrees(repo: Any) -> set[str]:
    lines = repo.git.worktree("list", "--porcelain").splitlines()
    return {os.path.realpath(line.split(" ", 1)[1]) for line in lines if line.startswith("worktree ")}


def _git_dir_of(worktree: str, session_id: str) -> str:
    from git import InvalidGitRepositoryError, NoSuchPathError, Repo

    try:
        with Repo(worktree) as repo:
            return os.path.realpath(repo.common_dir)
    except (InvalidGitRepositoryError, NoSuchPathError):
        raise ResumeError(f"Session {session_id!r}: {worktree!r} is not the root of a git worktree.",
                          session_id, worktree) from None


def _history(record: SessionRecord, transcript: Path) -> tuple[list[dict[str, Any]], str | None]:
    """The conversation and the last record's uuid; refused if unreadable, another session's, or empty."""
    sid = record.session_id
    try:
        records = list(read_transcript(transcript))
        history = rebuild_history(transcript)
    except FileNotFoundError:
        raise ResumeError(f"Session {sid!r} cannot be resumed: its transcript {str(transcript)!r} is missing.",
                          sid, str(transcript)) from None
    except (OSError, UnicodeDecodeError, AttributeError, TypeError) as e:
        raise ResumeError(f"Session {sid!r} cannot be resumed: its transcript {str(transcript)!r} is unreadable "
                          f"({_reason(e)}).", sid, str(transcript)) from None
    for index, entry in enumerate(records, 1):
        if "sessionId" not in entry:
            continue  # a record of no session (Claude Code's summary, say)
        owner = entry["sessionId"]
        if owner != sid:
            raise ResumeError(f"Session {sid!r} cannot be resumed: record {index} of its transcript "
                              f"{str(transcript)!r} belongs to session {owner!r}.", sid, str(transcript))
    if not history:
        raise ResumeError(f"Session {sid!r} cannot be resumed: its transcript {str(transcript)!r} holds no "
                          f"complete message.", sid, str(transcript))
    return history, next((entry["uuid"] for entry in reversed(records) if entry.get("uuid")), None)


# -- fork ------------------------------------------------------------------------


def fork_point(point: ResumePoint, new_session_id: str) -> ResumePoint:
    """``--fork-session``: the same conversation continued under a new session id.

    The fork gets a transcript of its own at once, a copy of the original's records
    re-stamped with the new id (uuids kept), and its own ``session.json`` with
    ``forked_from`` set, so ``--resume <fork id>`` works even before its first turn;
    the original's files are never written to. Same main agent id, directory and worktree.
    """
    new_id = validate_session_id(new_session_id)
    if session_exists(point.transcript_dir, new_id):
        where = _session_dir(point.transcript_dir, new_id)
        raise ResumeError(f"Cannot fork into session {new_id!r}: it already exists at {str(where)!r}.",
                          new_id, str(where))
    now_s = time.time()
    transcript = transcript_path(point.transcript_dir, new_id, point.record.main_agent_id)
    record = point.record.model_copy(update={
        "session_id": new_id, "transcript": str(transcript), "created_s": now_s, "updated_s": now_s,
        "forked_from": point.record.session_id,
    })
    copy_transcript(point.transcript, transcript, session_id=new_id)  # before the record: no record, no session
    record_session(point.transcript_dir, record)
    return ResumePoint(record=record, transcript_dir=point.transcript_dir, transcript=transcript,
                       history=point.history, last_uuid=last_uuid(transcript))


# -- paths -----------------------------------------------------------------------


def _root(transcript_dir: str | os.PathLike | None) -> Path:
    # Absolute: the record's transcript path must not depend on the directory covey was started in.
    return (Path(transcript_dir) if transcript_dir else DEFAULT_DIR).expanduser().absolute()


def _session_dir(transcript_dir: str | os.PathLike | None, session_id: str) -> Path:
    return _root(transcript_dir) / session_id


def _reason(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return f"{error.error_count()} invalid field(s): " + ", ".join(
            ".".join(map(str, e["loc"])) or e["msg"] for e in error.errors()[:3])
    return f"{type(error).__name__}: {error}"
