"""The Agent tool's result texts (covey/subagents/reports.py): the SendMessage hint only where the
caller has SendMessage (teams, coordinator mode); a default session has none."""

from __future__ import annotations

from covey.runtime.records import FinalReport
from covey.subagents.reports import completed_text, launched_text


def test_the_continue_hint_is_given_only_to_a_caller_with_send_message():
    report = FinalReport(status="completed", text="done")
    assert "SendMessage" not in completed_text("agent-1", report)
    assert "agentId: 1\n" in completed_text("agent-1", report)
    assert "\nagentId: 1 (use SendMessage with to: '1', summary: '<5-10 word recap>' to continue this agent)\n" in \
        completed_text("agent-1", report, can_continue=True)
    assert "SendMessage" not in launched_text("agent-1", "d", "/t/o.jsonl")
    assert "do not repeat it to the user)" in launched_text("agent-1", "d", None)
    assert "user. Use SendMessage with to: '1', summary: '<5-10 word recap>' to continue this agent)" in \
        launched_text("agent-1", "d", None, can_continue=True)


def test_the_id_is_shown_as_claude_code_shows_it_without_covey_s_agent_prefix():
    """Claude Code 2.1.337's sync result ends ``agentId: a831be084ca56d214 (use SendMessage with to:
    'a831be084ca56d214', summary: '<5-10 word recap>' to continue this agent)``, its launch receipt
    ``agentId: a7a1a3cfba9cbafad (internal ID - ...)``: the id its transcript agent-<id>.jsonl is named
    by, which the SDK's list_subagents gives; covey's ids are that with ``agent-``."""
    report = FinalReport(status="completed", text="done")
    assert "\nagentId: 0123456789abcdef\n" in completed_text("agent-0123456789abcdef", report)
    assert "\nagentId: 0123456789abcdef (internal id" in launched_text("agent-0123456789abcdef", "d", None)
