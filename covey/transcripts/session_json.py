"""Each session's record, ``<root>/projects/<project>/<session_id>/session.json`` (beside its
transcripts, where Claude Code keeps a session's: ``covey.transcripts.session_files``): who its main
agent is, where it ran (real paths), its model and permission mode; written atomically, read back
checked. A session an older covey wrote has it in ``<legacy>/<session_id>/`` (``SessionRoots``).
Session ids are UUIDs, lowercased (they are also the files' and folders' names)."""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from covey.common.private_dirs import private_dir
from covey.common.safe_files import read_bytes
from covey.errors import UserError
from covey.permissions.modes import PermissionMode
from covey.transcripts.session_files import SessionRoots, project_folder, transcript_path

RECORD_NAME = "session.json"
MAX_RECORD_BYTES = 1024 * 1024
"""A session record is a few hundred bytes; one larger (or a FIFO, or /dev/zero) is refused unread."""
Where = str | os.PathLike | SessionRoots | None
"""Where sessions are: a ``transcript_dir`` (None: the user's; ``SessionRoots.of``), or its roots."""
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
    def new(cls, transcript_dir: Where, *, session_id: str, main_agent_id: str,
            cwd: str | os.PathLike, worktree: str | os.PathLike | None = None, model_id: str | None = None,
            permission_mode: PermissionMode | None = None, now_s: float | None = None) -> SessionRecord:
        """A record for a session starting now: real paths, and the worktree's repository read from git."""
        session_id = validate_session_id(session_id)
        now_s = time.time() if now_s is None else now_s
        real_worktree = os.path.realpath(worktree) if worktree is not None else None
        return cls(
            session_id=session_id, main_agent_id=main_agent_id, cwd=os.path.realpath(cwd),
            transcript=str(transcript_path(project_folder(transcript_root(transcript_dir), cwd), session_id,
                                           main_agent_id, main=True)),
            worktree=real_worktree, worktree_git_dir=_git_dir_of(real_worktree, session_id) if real_worktree else None,
            model_id=model_id, permission_mode=permission_mode, created_s=now_s, updated_s=now_s,
        )


# -- ids -------------------------------------------------------------------------


def validate_session_id(text: object) -> str:
    """A session id as given to ``--session-id`` / ``--resume`` (or read from a file: anything), a UUID
    (any case), lowercased."""
    if not isinstance(text, str) or not _UUID.fullmatch(text):
        raise ResumeError(f"Invalid session ID {text!r}. Must be a valid UUID.", str(text), None)
    return text.lower()


def session_exists(transcript_dir: Where, session_id: str) -> bool:
    """Whether anything of this session is on disk (its record or any transcript, in any project
    folder or the legacy one): a new session must not take its id, or it would append to another
    conversation's files."""
    session_id = validate_session_id(session_id)
    roots = SessionRoots.of(transcript_dir).absolute()
    return bool(_in_projects(roots, session_id)) or (roots.legacy / session_id).exists()


# -- the record on disk --------------------------------------------------------


def record_session(transcript_dir: Where, record: SessionRecord) -> Path:
    """Write ``session.json`` atomically (a reader sees the old record or the new one, never half);
    not fsynced, so it costs a small write and a rename: cheap enough for every turn end."""
    path = session_dir(transcript_dir, record.session_id, record.cwd) / RECORD_NAME
    private_dir(path.parent, "session folder")
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{RECORD_NAME}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(record.model_dump_json(indent=2))
        os.replace(temp, path)
    finally:
        Path(temp).unlink(missing_ok=True)
    return path


def touch_session(transcript_dir: Where, session_id: str, *,
                  now_s: float | None = None) -> SessionRecord:
    """Mark the session as used now (``--continue`` takes the most recently updated one)."""
    record = read_record(transcript_dir, session_id)
    touched = record.model_copy(update={"updated_s": time.time() if now_s is None else now_s})
    record_session(transcript_dir, touched)
    return touched


def read_record(transcript_dir: Where, session_id: str) -> SessionRecord:
    """The session's record; ``ResumeError`` naming where it looked if it is missing or unreadable."""
    session_id = validate_session_id(session_id)
    path = record_path(transcript_dir, session_id)
    try:
        record = SessionRecord.model_validate_json(read_bytes(path, MAX_RECORD_BYTES, what="a session record"))
    except FileNotFoundError:
        raise ResumeError(f"Session {session_id!r} cannot be resumed: its record {str(path)!r} is missing.",
                          session_id, str(path)) from None
    except (OSError, ValueError) as e:  # ValueError: a ValidationError, or a file too large
        raise ResumeError(f"Session {session_id!r} cannot be resumed: its record {str(path)!r} is unreadable "
                          f"({error_reason(e)}).", session_id, str(path)) from None
    if record.session_id != session_id:
        raise ResumeError(f"Session {session_id!r} cannot be resumed: its record {str(path)!r} is of session "
                          f"{record.session_id!r}.", session_id, str(path))
    return record


def _git_dir_of(worktree: str, session_id: str) -> str:
    from git import InvalidGitRepositoryError, NoSuchPathError, Repo

    try:
        with Repo(worktree) as repo:
            return os.path.realpath(repo.common_dir)
    except (InvalidGitRepositoryError, NoSuchPathError):
        raise ResumeError(f"Session {session_id!r}: {worktree!r} is not the root of a git worktree.",
                          session_id, worktree) from None


# -- paths -----------------------------------------------------------------------


def transcript_root(transcript_dir: Where) -> Path:
    """Where new sessions go, absolute: a record's paths must not depend on where covey started."""
    return SessionRoots.of(transcript_dir).absolute().root


def session_dir(transcript_dir: Where, session_id: str,
                cwd: str | os.PathLike) -> Path:
    """The session's own folder (its record, its sub-agents' transcripts) in its project's folder."""
    return project_folder(transcript_root(transcript_dir), cwd) / session_id


def record_path(transcript_dir: Where, session_id: str) -> Path:
    """Where the session's ``session.json`` is (or, its folder there, should be): in the project
    folder that holds anything of the session, else in the legacy folder; ``ResumeError`` if neither."""
    roots = SessionRoots.of(transcript_dir).absolute()
    found = _in_projects(roots, session_id)
    if records := [path for path in found if path.name == RECORD_NAME]:
        return records[0]
    legacy = roots.legacy / session_id / RECORD_NAME
    if legacy.exists() or (legacy.parent.is_dir() and not found):  # an old session, its move perhaps cut short
        return legacy
    if found:  # its transcript or folder without its record: "missing", where it belongs
        return found[0].parent / session_id / RECORD_NAME
    looked = roots.root / "projects" / "*" / session_id
    raise ResumeError(f"No session {session_id!r} found: there is no {str(looked)!r} nor "
                      f"{str(roots.legacy / session_id)!r}.", session_id, str(roots.legacy / session_id))


def is_legacy(path: Path, transcript_dir: Where) -> bool:
    """Whether a record path is in the folder an older covey kept sessions in."""
    return path.parent.parent == SessionRoots.of(transcript_dir).absolute().legacy


def _in_projects(roots: SessionRoots, session_id: str) -> list[Path]:
    """The session's record, transcript and folder in any project folder (sorted; records first)."""
    projects = roots.root / "projects"
    found = [*projects.glob(f"*/{session_id}/{RECORD_NAME}"), *projects.glob(f"*/{session_id}.jsonl"),
             *projects.glob(f"*/{session_id}")]
    return sorted(found, key=lambda path: (path.name != RECORD_NAME, str(path)))


def error_reason(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return f"{error.error_count()} invalid field(s): " + ", ".join(
            ".".join(map(str, e["loc"])) or e["msg"] for e in error.errors()[:3])
    return f"{type(error).__name__}: {error}"
