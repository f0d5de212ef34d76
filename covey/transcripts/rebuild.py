"""A session known only by its transcript: the record ``--resume`` needs, rebuilt from the records.

A program that keeps sessions itself (claude-agent-sdk's ``session_store``, fed by
``--session-mirror``) resumes one by writing what it stored, ``projects/<project>/<id>.jsonl``
(and its sub-agents'), into a fresh ``CLAUDE_CONFIG_DIR``: covey's ``session.json`` is not among
the entries mirrored, as Claude Code keeps none. The transcript says what resume needs: the
session (each record's ``sessionId``, checked by ``find_resume``), and the project directory
(each record's ``cwd``, which must be the one the project folder is named after). The model and
permission mode come from the command line and settings, as in Claude Code; the main agent gets
a new id. The record is written at the resumed session's first turn, as a new session's is.

``--continue`` finds such a session too (``latest_lone``): as Claude Code's, it takes the project's
most recently written transcript, here when that is newer than every recorded session of the
directory, so a conversation Claude Code (or a session store) left is continued like covey's own.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from covey.ids import AgentId
from covey.transcripts.session_files import SessionRoots, project_name
from covey.transcripts.session_json import RECORD_NAME, ResumeError, SessionRecord, Where, error_reason, validate_session_id
from covey.transcripts.transcript import read_transcript, record_time_s


def lone_transcript(transcript_dir: Where, session_id: str) -> Path | None:
    """The session's main transcript when it has no record beside it (a session store's); else None."""
    session_id = validate_session_id(session_id)
    roots = SessionRoots.of(transcript_dir).absolute()
    projects = roots.root / "projects"
    if _recorded(roots, session_id):
        return None
    return next(iter(sorted(projects.glob(f"*/{session_id}.jsonl"))), None)


def latest_lone(transcript_dir: Where, folder: Path, cwd: str, *, newer_than_s: float | None) -> str | None:
    """The id of the most recently written main transcript in the project ``folder`` that has no
    record beside it and ran in ``cwd`` (a real path), if written after ``newer_than_s``; else None."""
    roots = SessionRoots.of(transcript_dir).absolute()
    for _, path in sorted(_written(folder, newer_than_s), reverse=True):
        try:
            session_id = validate_session_id(path.stem)
            if not _recorded(roots, session_id) and record_from_transcript(path, session_id).cwd == cwd:
                return session_id
        except ResumeError:  # not a session's transcript, or another directory's: not this one to continue
            continue
    return None


def _written(folder: Path, newer_than_s: float | None) -> list[tuple[float, Path]]:
    """The folder's transcripts (``<id>.jsonl``) with the time each was last written."""
    found = []
    for path in folder.glob("*.jsonl"):
        try:
            written_s = path.stat().st_mtime
        except OSError:
            continue
        if newer_than_s is None or written_s > newer_than_s:
            found.append((written_s, path))
    return found


def _recorded(roots: SessionRoots, session_id: str) -> bool:
    """Whether the session has a record (or an older covey's, its move perhaps cut short)."""
    return any((roots.root / "projects").glob(f"*/{session_id}/{RECORD_NAME}")) \
        or (roots.legacy / session_id / RECORD_NAME).exists()


def record_from_transcript(transcript: Path, session_id: str) -> SessionRecord:
    """The record of the session whose main transcript is ``transcript`` (``<project>/<id>.jsonl``),
    rebuilt from its records; ``ResumeError`` if they name no directory of that project."""
    session_id = validate_session_id(session_id)
    try:
        records = list(read_transcript(transcript))
    except (OSError, UnicodeDecodeError) as e:
        raise ResumeError(f"Session {session_id!r} cannot be resumed: its transcript {str(transcript)!r} is "
                          f"unreadable ({error_reason(e)}).", session_id, str(transcript)) from None
    cwds = [record["cwd"] for record in reversed(records) if isinstance(record.get("cwd"), str) and record["cwd"]]
    cwd = next((os.path.realpath(path) for path in cwds if _names(path, transcript.parent.name)), None)
    if cwd is None:
        raise ResumeError(f"Session {session_id!r} cannot be resumed: its transcript {str(transcript)!r} has no "
                          f"session.json beside it and names no directory of the project "
                          f"{transcript.parent.name!r} (each record's cwd).", session_id, str(transcript))
    times = [when for record in records if (when := record_time_s(record)) is not None]
    now_s = time.time()
    return SessionRecord(session_id=session_id, main_agent_id=AgentId.new(), transcript=str(transcript), cwd=cwd,
                         created_s=min(times, default=now_s), updated_s=max(times, default=now_s))


def _names(cwd: str, folder: str) -> bool:
    """Whether ``cwd`` is a directory of the project folder ``folder``; a value with a NUL in it is
    no path at all (``realpath`` would raise)."""
    return "\0" not in cwd and project_name(cwd) == folder
