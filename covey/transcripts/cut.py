"""A truncating resume (claude-agent-sdk's ``resume_session_at`` / ``resume_drops_turn``): the
conversation up to and including one record, continued in a fork (docs/resume.md#truncating-resume).

covey cuts only into a fork: the original's transcript is never cut or branched, and a session
resumed later reads one line of records, not a tree. ``resume_drops_turn`` names the prompt of the
turn the cut discards; the resume is refused unless every record after the cut belongs to that
turn (its prompt first, then no other prompt: no message queued meanwhile, no notification).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from covey.transcripts.session_json import ResumeError
from covey.transcripts.transcript import read_transcript

DROPS_TURN = "Resume rejected by --resume-drops-turn:"
"""How a refused check begins (the SDK tells programs to match on it)."""


def records_upto(transcript: Path, at: str, *, drops_turn: str | None, session_id: str) -> list[dict[str, Any]]:
    """The transcript's records up to and including the one whose uuid is ``at``; checked
    against ``drops_turn`` when given."""
    records = list(read_transcript(transcript))
    cut = next((index for index, record in enumerate(records) if record.get("uuid") == at), None)
    if cut is None:
        raise ResumeError(f"--resume-session-at: session {session_id!r} has no message {at!r}", session_id,
                          str(transcript))
    kept, dropped = records[:cut + 1], records[cut + 1:]
    if drops_turn is not None:
        check_dropped(dropped, drops_turn)
    return kept


def check_dropped(dropped: list[dict[str, Any]], drops_turn: str) -> None:
    """Every dropped record belongs to the turn whose prompt's uuid is ``drops_turn``."""
    if not drops_turn:
        raise ResumeError(f"{DROPS_TURN} it names no prompt")
    messages = [record for record in dropped if isinstance(record.get("message"), dict)]
    if messages and messages[0].get("uuid") != drops_turn:
        raise ResumeError(f"{DROPS_TURN} the first message after the cut is {messages[0].get('uuid')!r}, "
                          f"not the prompt {drops_turn!r}")
    if not messages and dropped:
        raise ResumeError(f"{DROPS_TURN} the records after the cut are not the turn of {drops_turn!r}")
    if later := next((record for record in messages[1:] if _is_prompt(record)), None):
        raise ResumeError(f"{DROPS_TURN} the discarded records hold another user message ({later.get('uuid')!r}) "
                          f"besides the turn of {drops_turn!r}")


def _is_prompt(record: dict[str, Any]) -> bool:
    """A user message someone sent (a prompt, a queued message, a notification), not a tool result
    nor the context covey records before a prompt."""
    message = record["message"]
    if message.get("role") != "user" or record.get("isMeta"):
        return False
    content = message.get("content")
    return isinstance(content, str) or not all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content or [])
