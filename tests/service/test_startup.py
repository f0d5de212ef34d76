"""A session that does not start names the cause in Claude Code's words (``startup_failure_reason``)."""

from __future__ import annotations

from covey.errors import UserError
from covey.events import ResultEvent
from covey.service.startup import failure_fields
from covey.transcripts.session_json import ResumeError


def test_a_resume_target_that_is_not_there_is_claude_codes_reason_with_the_id_asked_for():
    fields = failure_fields(ResumeError("No session 'abc' found", "abc", "/home/p/.claude"))
    assert fields == {"startup_failure_reason": "resume_target_not_found", "session_id": "abc"}
    wire = ResultEvent.failure("No session 'abc' found", **fields).wire()
    assert wire["startup_failure_reason"] == "resume_target_not_found" and wire["session_id"] == "abc"
    assert wire["errors"] == ["No session 'abc' found"] and wire["is_error"] is True


def test_other_failures_carry_no_reason():
    assert failure_fields(UserError("settings file 'x' is not JSON")) == {}
    assert "startup_failure_reason" not in ResultEvent.failure("no").wire()
