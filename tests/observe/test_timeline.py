"""The timeline's data: rows per agent under their parents, spans, statuses and costs, read from
run records and from a session's files (issue 43, "a picture of the run"). No Ray."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from covey.model.base import TokenUsage
from covey.observe.session_runs import find_session, runs_on_disk
from covey.observe.timeline import timeline_of
from covey.transcripts.session_json import ResumeError
from tests.observe.timeline_files import MAIN, T0, write_session


@pytest.fixture
def session(tmp_path, monkeypatch):
    config = tmp_path / "config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    (tmp_path / "proj").mkdir()
    return write_session(config, tmp_path / "proj")


def _by_label(timeline):
    return {row.label.split(":")[0] + ":" + row.agent_id.removeprefix("agent-"): row for row in timeline.rows}


def test_a_session_on_disk_gives_a_row_per_agent_children_under_their_parent(session):
    runs, problems = runs_on_disk(session)
    timeline = timeline_of(runs, now_s=T0 + 20)
    assert problems == []
    assert [(row.label, row.depth) for row in timeline.rows] == [
        ("main:main00000000", 0), ("general-purpose:a", 1), ("worker:c", 2), ("Explore:b", 1),
        ("general-purpose:d", 1)]
    assert [row.status for row in timeline.rows] == ["completed", "completed", "killed", "failed", "running"]
    main, a, c, b, d = timeline.rows
    assert main.start_s == 0 and main.end_s == pytest.approx(9)
    assert a.start_s == pytest.approx(1.2) and a.end_s == pytest.approx(7)
    assert d.end_s == pytest.approx(20)  # running: its row reaches now
    assert timeline.duration_s == pytest.approx(20)


def test_each_row_holds_its_model_requests_and_tool_calls(session):
    timeline = timeline_of(runs_on_disk(session)[0], now_s=T0 + 20)
    a = timeline.rows[1]
    assert [(s.kind, s.name) for s in a.spans] == [("model", "model request"), ("tool", "Read"), ("tool", "Agent"),
                                                   ("model", "model request")]
    read = a.spans[1]
    assert (read.start_s, read.end_s) == (pytest.approx(2), pytest.approx(2.5))
    assert a.busy_s("model") == pytest.approx(0.8 + 1.0)  # each from the record before its reply
    main = timeline.rows[0]
    assert sum(1 for s in main.spans if s.name == "Agent") == 3  # the two calls run together, then d's


def test_tokens_and_cost_count_each_reply_once_priced_by_its_model(session):
    runs = {run.agent_id: run for run in runs_on_disk(session)[0]}
    assert runs[MAIN].usage.input_tokens == 3000 and runs[MAIN].usage.output_tokens == 30
    a = runs["agent-a"]
    assert a.usage.total == 2020
    assert a.cost_usd == pytest.approx((1000 * 3 + 10 * 15 + 1000 * 1 + 10 * 5) / 1e6)  # sonnet, then haiku
    timeline = timeline_of(runs.values(), now_s=T0 + 20)
    assert timeline.cost_usd == pytest.approx(sum(r.cost_usd for r in runs.values()))
    assert timeline.tokens == sum(r.usage.total for r in runs.values())


def test_bad_files_are_one_line_each_and_the_rest_is_shown(session, tmp_path):
    folder = next((tmp_path / "config" / "projects").glob(f"*/{session}")) / "subagents"
    (folder / "agent-b.meta.json").write_text("{not json")
    with open(folder / "agent-a.jsonl", "a") as out:
        out.write("not a record\n")
        out.write(json.dumps({"type": "assistant", "timestamp": T0 + 7.5, "message": "a string"}) + "\n")
    runs, problems = runs_on_disk(session)
    timeline = timeline_of(runs, now_s=T0 + 20, problems=problems)
    assert len(timeline.rows) == 5
    assert len(timeline.problems) == 2 and all("\n" not in line for line in timeline.problems)
    assert "agent-b.meta.json" in timeline.problems[0] and "not readable as JSON" in timeline.problems[0]
    assert "agent-a.jsonl" in timeline.problems[1] and "without its model requests" in timeline.problems[1]
    rows = {row.agent_id: row for row in timeline.rows}
    assert rows["agent-a"].spans == () and rows["agent-a"].status == "completed"
    assert rows["agent-b"].label == "agent:b"  # its type unknown, its row still there
    assert rows["agent-c"].spans  # the others keep theirs


def _record(agent_id, parent=None, status="completed", start=0.0, end=1.0, **extra):
    return SimpleNamespace(agent_id=agent_id, parent_agent_id=parent, agent_type="general-purpose", member_name=None,
                           description="", status=status, started_at=T0 + start, ended_at=T0 + end if end else None,
                           usage=TokenUsage(input_tokens=5), cost_usd=0.5, output_file=None, **extra)


def test_registry_records_with_a_loop_of_parents_or_an_odd_status_are_all_shown():
    records = [_record("agent-x", parent="agent-y"), _record("agent-y", parent="agent-x", start=0.5),
               _record("agent-z", status="weird", start=0.2, member_name_is="ignored")]
    timeline = timeline_of(records, now_s=T0 + 5)
    assert sorted(row.agent_id for row in timeline.rows) == ["agent-x", "agent-y", "agent-z"]
    assert {row.agent_id: row.status for row in timeline.rows}["agent-z"] == "unknown"


def test_a_teammate_is_labelled_by_its_name_and_queued_agents_reach_now():
    records = [_record("agent-lead", end=None, status="running"),
               SimpleNamespace(**{**vars(_record("agent-m", parent="agent-lead", start=0.5, end=None,
                                                 status="queued")), "member_name": "amy"})]
    timeline = timeline_of(records, now_s=T0 + 3)
    assert [row.label for row in timeline.rows] == ["general-purpose:lead", "general-purpose:amy"]
    assert all(row.end_s == pytest.approx(3) for row in timeline.rows)


def test_no_records_is_an_empty_timeline():
    timeline = timeline_of([])
    assert timeline.rows == () and timeline.duration_s == 0 and timeline.cost_usd == 0


def test_a_session_is_found_by_its_id_or_the_start_of_it(session, tmp_path):
    assert find_session(session) == session
    assert find_session(session[:8].upper()) == session
    with pytest.raises(ResumeError, match="first 8 characters"):
        find_session("abc")
    with pytest.raises(ResumeError, match="matches no session"):
        find_session("0123abcd")
    with pytest.raises(ResumeError, match="No session"):
        runs_on_disk("00000000-0000-0000-0000-000000000000")


def test_calls_run_together_are_side_by_side_on_lanes(session):
    main = timeline_of(runs_on_disk(session)[0], now_s=T0 + 20).rows[0]
    together = [(s.name, s.lane) for s in main.spans if s.kind == "tool" and s.start_s == pytest.approx(1)]
    assert together == [("Agent", 0), ("Agent", 1)] and main.lanes == 2
    later = [s for s in main.spans if s.kind == "tool" and s.start_s == pytest.approx(5)]
    assert [s.lane for s in later] == [0]  # a later call takes the first lane again


def test_a_running_agents_calls_at_work_reach_now(session):
    runs = runs_on_disk(session)[0]
    d = next(run for run in runs if run.agent_id == "agent-d")
    d.tools_in_flight = ["Bash"]  # what the registry's record says while the call runs
    row = next(r for r in timeline_of(runs, now_s=T0 + 20).rows if r.agent_id == "agent-d")
    bash = [s for s in row.spans if s.kind == "tool"]
    assert [(s.name, s.start_s, s.end_s) for s in bash] == [("Bash", pytest.approx(6), pytest.approx(20))]
    d.tools_in_flight = []  # its record names none: the transcript's spans as they are
    row = next(r for r in timeline_of(runs, now_s=T0 + 20).rows if r.agent_id == "agent-d")
    assert [s.end_s for s in row.spans if s.kind == "tool"] == [pytest.approx(6)]


def test_a_transcript_with_no_timed_record_is_named_not_lost(session, tmp_path):
    folder = next((tmp_path / "config" / "projects").glob(f"*/{session}")) / "subagents"
    (folder / "agent-e.jsonl").write_text(json.dumps({"type": "user", "message": {"content": "E"}}) + "\n")
    runs, problems = runs_on_disk(session)
    assert "agent-e" not in [run.agent_id for run in runs]
    assert len(problems) == 1 and "agent-e.jsonl" in problems[0] and "no record with a time" in problems[0]
