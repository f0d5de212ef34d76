"""A session's record beside its transcripts: where a resumed session continues, the id a new
one takes, the index entry ``--resume`` / ``--continue`` find, and the conversation so far.
``roots`` is where sessions are (``SessionRoots``: docs/resume.md)."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from covey.ids import new_session_id
from covey.permissions.modes import PermissionMode
from covey.session.options import SessionOptions
from covey.transcripts.session_files import SessionRoots

log = logging.getLogger("covey.session")


def resume_point(options: SessionOptions, cwd: Path, roots: SessionRoots, into: Path | None = None) -> Any:
    """Where a resumed session continues (``resume`` / ``continue_conversation``), else None.
    ``into``: a session that is not kept continues a private copy there (covey/session/ephemeral.py)."""
    if not (options.resume or options.continue_conversation):
        return None
    from covey.transcripts.resume import ResumeError, find_resume

    if options.resume_session_at and not options.fork_session:
        raise ResumeError("--resume-session-at: covey cuts a conversation only into a new session, never the "
                          "original's transcript: add --fork-session (the SDK's fork_session=True)")
    point = find_resume(roots, session_id=options.resume,
                        continue_in=None if options.resume else cwd)
    if into is not None:
        from covey.session.ephemeral import private_copy

        point = private_copy(point, into)
    if options.fork_session:
        from covey.transcripts.resume import fork_point

        point = fork_point(point, options.session_id or new_session_id(), at=options.resume_session_at,
                           drops_turn=options.resume_drops_turn)
    return point


def chosen_session_id(options: SessionOptions, resumed: Any, roots: SessionRoots) -> str:
    """The resumed session's id, the one asked for (refused if taken), or a new one."""
    if resumed is not None:
        return str(resumed.record.session_id)
    if options.session_id is None:
        return new_session_id()
    from covey.transcripts.resume import ResumeError, session_exists, validate_session_id

    chosen = validate_session_id(options.session_id)
    if session_exists(roots, chosen):
        raise ResumeError(f"session id {chosen} is already in use: continue it with --resume {chosen}")
    return chosen


def record_session(roots: SessionRoots, *, session_id: str, main_agent_id: str, cwd: Path, model_id: str,
                   mode: PermissionMode) -> None:
    """The session's index entry beside its transcripts (what ``--resume`` / ``--continue``
    find): written at its first turn, then updated at each one (model, mode, time)."""
    from covey.transcripts.resume import ResumeError, SessionRecord, read_record, record_session as write_record

    try:
        try:
            record = read_record(roots, session_id).model_copy(update={
                "model_id": model_id, "permission_mode": mode, "updated_s": time.time()})
        except ResumeError:
            record = SessionRecord.new(roots, session_id=session_id, main_agent_id=main_agent_id, cwd=cwd,
                                       model_id=model_id, permission_mode=mode)
        write_record(roots, record)
    except (OSError, ResumeError) as exc:  # the run goes on; only resuming it later is lost
        log.warning("the session index in %s could not be written: %s", roots.root, exc)


def history(transcript: Path, turns: int, resumed: Any) -> list[dict[str, Any]] | None:
    """The conversation so far, for a turn after the first (or a resumed session's first)."""
    if turns == 0 and resumed is not None:
        return list(resumed.history)
    if turns == 0:
        return None
    from covey.transcripts.transcript import rebuild_history

    return rebuild_history(transcript) if transcript.exists() else None
