"""Finding a session to resume, verified before it is adopted (docs/resume.md).

Each session keeps ``<root>/projects/<project>/<session_id>/session.json`` beside its
transcripts (``covey.transcripts.session_json``): who its main agent is, where it ran (real paths),
its model and permission mode. ``find_resume`` reads it back for ``--resume ID`` or
``--continue`` (a session an older covey wrote is moved where sessions are now first:
``covey.transcripts.legacy``) and checks that the place is still the same place: a directory or
worktree whose realpath or repository can no longer be verified is refused, not
silently adopted (docs/resume.md). Nothing here starts a process: resume rebuilds the
main conversation, never the agents, shells or sockets that were running.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from covey.transcripts.cut import records_upto
from covey.transcripts.session_files import SessionRoots, project_folder
from covey.transcripts.transcript import copy_transcript, last_uuid, read_transcript, rebuild_history, transcript_path
from covey.transcripts.session_json import (
    MAX_RECORD_BYTES, RECORD_NAME, ResumeError, SessionRecord, Where, error_reason, is_legacy, read_record,
    record_path, record_session, session_dir, session_exists, touch_session, transcript_root, validate_session_id,
)
from covey.common.safe_files import read_bytes

__all__ = [  # the record's names too: callers import them from here (docs/resume.md)
    "RECORD_NAME", "ResumeError", "ResumePoint", "SessionRecord", "find_resume", "fork_point", "read_record",
    "record_session", "session_exists", "touch_session", "validate_session_id",
]


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


# -- finding and verifying -------------------------------------------------------


def find_resume(transcript_dir: Where, *, session_id: str | None = None,
                continue_in: str | os.PathLike | None = None) -> ResumePoint:
    """The session to resume: ``session_id`` (``--resume ID``), or the most recently updated
    session whose project directory is ``realpath(continue_in)`` (``--continue``); verified
    (its directory, worktree and transcript) before it is returned."""
    if session_id is not None and continue_in is not None:
        raise ValueError("find_resume takes exactly one of session_id and continue_in")
    if continue_in is not None:
        session_id = _latest_in(transcript_dir, continue_in)
    if session_id is None:
        raise ValueError("find_resume takes exactly one of session_id and continue_in")
    record = _record_of(transcript_dir, session_id)
    _check_place(record)
    history, last = _history(record, Path(record.transcript))
    if is_legacy(path := record_path(transcript_dir, record.session_id), transcript_dir):
        from covey.transcripts.legacy import migrate  # verified first: a session refused is left where it is

        record = migrate(SessionRoots.of(transcript_dir).absolute(), path, record)
    transcript = Path(record.transcript)
    return ResumePoint(record=record, transcript_dir=transcript_root(transcript_dir), transcript=transcript,
                       history=history, last_uuid=last)


def _record_of(transcript_dir: Where, session_id: str) -> SessionRecord:
    """The session's record; for a transcript without one (a session store's, which holds only
    the transcripts), rebuilt from its records (``covey.transcripts.rebuild``)."""
    from covey.transcripts.rebuild import lone_transcript, record_from_transcript

    if (transcript := lone_transcript(transcript_dir, session_id)) is not None:
        return record_from_transcript(transcript, session_id)
    return read_record(transcript_dir, session_id)


def _latest_in(transcript_dir: Where, cwd: str | os.PathLike) -> str:
    """The session ``--continue`` takes: the directory's most recently updated recorded session, or
    a transcript without a record written after it (``covey.transcripts.rebuild.latest_lone``)."""
    from covey.transcripts.rebuild import latest_lone

    roots, real = SessionRoots.of(transcript_dir).absolute(), os.path.realpath(cwd)
    folder = project_folder(roots.root, real)
    best = _latest_recorded(roots, folder, real)
    lone = latest_lone(roots, folder, real, newer_than_s=best.updated_s if best is not None else None)
    if lone is not None:
        return lone
    if best is None:
        raise ResumeError(f"No conversation found to continue in {real!r} (looked in {str(folder)!r} and "
                          f"{str(roots.legacy)!r}).", None, real)
    return best.session_id


def _latest_recorded(roots: SessionRoots, folder: Path, real: str) -> SessionRecord | None:
    best: SessionRecord | None = None
    for path in [*folder.glob(f"*/{RECORD_NAME}"), *roots.legacy.glob(f"*/{RECORD_NAME}")]:
        try:
            record = SessionRecord.model_validate_json(read_bytes(path, MAX_RECORD_BYTES, what="a session record"))
        except (OSError, ValueError):  # ValueError: a ValidationError, or a file too large
            continue  # an unreadable record says nothing about its directory; another session's problem
        if record.cwd == real and (best is None or record.updated_s > best.updated_s):
            best = record
    return best


def _check_place(record: SessionRecord) -> None:
    """Refuse a directory or worktree that is no longer verifiably where the session ran."""
    sid = record.session_id
    if problem := _dir_problem(record.cwd, "project directory"):
        raise ResumeError(f"Session {sid!r} cannot be resumed: {problem}", sid, record.cwd)
    if record.worktree is not None and (problem := _worktree_problem(record, record.worktree)):
        raise ResumeError(f"Session {sid!r} cannot be resumed: {problem}", sid, record.worktree)


def _dir_problem(path: str, what: str) -> str | None:
    if not os.path.isdir(path):
        return f"its {what} {path!r} no longer exists."
    if (now := os.path.realpath(path)) != path:
        return f"its {what} {path!r} now resolves to {now!r}."
    return None


def _worktree_problem(record: SessionRecord, path: str) -> str | None:
    """Why ``path`` (the record's worktree) is no longer verifiably that worktree; None if it is."""
    from git import InvalidGitRepositoryError, NoSuchPathError, Repo

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
                          f"({error_reason(e)}).", sid, str(transcript)) from None
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


def fork_point(point: ResumePoint, new_session_id: str, *, at: str | None = None,
               drops_turn: str | None = None) -> ResumePoint:
    """``--fork-session``: the same conversation continued under a new session id.

    The fork gets a transcript of its own at once, a copy of the original's records
    re-stamped with the new id (uuids kept), and its own ``session.json`` with
    ``forked_from`` set, so ``--resume <fork id>`` works even before its first turn;
    the original's files are never written to. Same main agent id, directory and worktree.
    ``at``: only the records up to and including that uuid (a truncating resume, checked
    against ``drops_turn``: ``covey.transcripts.cut``).
    """
    new_id = validate_session_id(new_session_id)
    if session_exists(point.transcript_dir, new_id):
        where = session_dir(point.transcript_dir, new_id, point.record.cwd)
        raise ResumeError(f"Cannot fork into session {new_id!r}: it already exists at {str(where)!r}.",
                          new_id, str(where))
    now_s = time.time()
    transcript = transcript_path(project_folder(point.transcript_dir, point.record.cwd), new_id,
                                 point.record.main_agent_id, main=True)
    record = point.record.model_copy(update={
        "session_id": new_id, "transcript": str(transcript), "created_s": now_s, "updated_s": now_s,
        "forked_from": point.record.session_id,
    })
    kept = records_upto(point.transcript, at, drops_turn=drops_turn, session_id=point.record.session_id) if at else None
    copy_transcript(point.transcript, transcript, session_id=new_id, records=kept)  # before the record: no record, no session
    record_session(point.transcript_dir, record)
    history = rebuild_history(transcript) if at else point.history
    return ResumePoint(record=record, transcript_dir=point.transcript_dir, transcript=transcript,
                       history=history, last_uuid=last_uuid(transcript))
