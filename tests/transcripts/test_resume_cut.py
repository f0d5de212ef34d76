"""A truncating resume (``--resume-session-at`` / ``--resume-drops-turn``): the conversation up to
a message, continued in a fork; the check that only the named turn is dropped."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from covey.transcripts.resume import ResumeError, find_resume, fork_point
from covey.transcripts.transcript import read_transcript
from tests.transcripts.test_resume import _session, project, tdir  # noqa: F401 (fixtures)

TWO_TURNS = [
    {"role": "user", "content": "the word is PINEAPPLE"},
    {"role": "assistant", "content": [{"type": "text", "text": "noted"}]},
    {"role": "user", "content": "now forget it"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Glob", "input": {"pattern": "*"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "forgotten"}]},
]


def _uuids(transcript: Path) -> list[str]:
    return [record["uuid"] for record in read_transcript(transcript)]


def test_a_fork_at_a_message_keeps_the_conversation_up_to_it(tdir, project):
    record = _session(tdir, project, messages=TWO_TURNS)
    original = _uuids(Path(record.transcript))
    point = find_resume(tdir, session_id=record.session_id)
    fork = fork_point(point, str(uuid.uuid4()), at=original[1], drops_turn=original[2])
    assert fork.history == [{"role": "user", "content": [{"type": "text", "text": "the word is PINEAPPLE"}]},
                            {"role": "assistant", "content": [{"type": "text", "text": "noted"}]}]
    assert _uuids(fork.transcript) == original[:2] and fork.last_uuid == original[1]
    assert _uuids(Path(record.transcript)) == original  # the original keeps every record


def test_dropping_more_than_the_named_turn_is_refused(tdir, project):
    record = _session(tdir, project, messages=TWO_TURNS)
    uuids = _uuids(Path(record.transcript))
    point = find_resume(tdir, session_id=record.session_id)
    # Cut after the first prompt: the dropped records start with the reply, not the named prompt.
    with pytest.raises(ResumeError, match="^Resume rejected by --resume-drops-turn: the first message after"):
        fork_point(point, str(uuid.uuid4()), at=uuids[0], drops_turn=uuids[2])
    # Cut after the first turn, but name the first prompt: the second prompt is dropped too.
    with pytest.raises(ResumeError, match="^Resume rejected by --resume-drops-turn:"):
        fork_point(point, str(uuid.uuid4()), at=uuids[1], drops_turn=uuids[0])


def test_a_turn_that_took_in_a_queued_message_is_not_dropped_silently(tdir, project):
    queued = [*TWO_TURNS[:4], {"role": "user", "content": "also, one more thing"}, *TWO_TURNS[4:]]
    record = _session(tdir, project, messages=queued)
    uuids = _uuids(Path(record.transcript))
    point = find_resume(tdir, session_id=record.session_id)
    with pytest.raises(ResumeError, match="another user message"):
        fork_point(point, str(uuid.uuid4()), at=uuids[1], drops_turn=uuids[2])
    fork = fork_point(point, str(uuid.uuid4()), at=uuids[1])  # unchecked, as the SDK's default
    assert len(fork.history) == 2


def test_a_message_the_session_does_not_have_is_named(tdir, project):
    record = _session(tdir, project, messages=TWO_TURNS)
    with pytest.raises(ResumeError, match="has no message 'nope'"):
        fork_point(find_resume(tdir, session_id=record.session_id), str(uuid.uuid4()), at="nope")
