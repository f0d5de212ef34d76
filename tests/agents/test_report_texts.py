"""The Agent tool's result texts (covey/agents/reports.py): the SendMessage hint only where the
caller has SendMessage (teams, coordinator mode); a default session has none."""

from __future__ import annotations

from covey.agents.records import FinalReport
from covey.agents.reports import completed_text, launched_text


def test_the_continue_hint_is_given_only_to_a_caller_with_send_message():
    report = FinalReport(status="completed", text="done")
    assert "SendMessage" not in completed_text("agent-1", report)
    assert "agentId: agent-1\n" in completed_text("agent-1", report)
    assert "use SendMessage with to: agent-1" in completed_text("agent-1", report, can_continue=True)
    assert "SendMessage" not in launched_text("agent-1", "d", "/t/o.jsonl")
    assert "do not repeat it to the user)" in launched_text("agent-1", "d", None)
    assert "SendMessage to continue" in launched_text("agent-1", "d", None, can_continue=True)
