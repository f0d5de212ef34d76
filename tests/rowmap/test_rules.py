"""The rules of a map, plain (no Ray): rows and their keys, the template, the journal's
resume, retries, a row never run twice to completion, the budget's stop, the summary."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from covey.errors import UserError
from covey.rowmap.journal import MapJournal
from covey.rowmap.rows import read_rows
from covey.rowmap.runner import MapRunner
from covey.rowmap.summary import RowResult
from covey.rowmap.template import Template, row_prompt


# -- rows ---------------------------------------------------------------------------


def test_rows_keep_their_place_and_a_key_that_survives_reordering_and_tells_repeats_apart():
    first = read_rows([{"a": 1, "b": 2}, {"a": 3}, {"b": 2, "a": 1}])
    again = read_rows([{"a": 3}, {"a": 1, "b": 2}])
    assert [row.index for row in first] == [0, 1, 2]
    assert first[0].key != first[2].key and first[2].key.startswith(first[0].key)  # the same row twice: two rows
    assert again[1].key == first[0].key and again[0].key == first[1].key  # reordered: the same keys


def test_a_jsonl_file_gives_its_rows_and_a_bad_line_is_one_error_naming_file_and_line(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"path": "a.py"}\n\n{"path": "b.py"}\n')
    assert [row.data["path"] for row in read_rows(rows)] == ["a.py", "b.py"]
    assert read_rows(str(rows))[1].where == f"{rows}:3"
    rows.write_text('{"path": "a.py"}\n{"path": \n')
    with pytest.raises(UserError, match=rf"^{rows}:2: not a JSON object"):
        read_rows(rows)
    rows.write_text('{"path": "a.py"}\n[1, 2]\n')
    with pytest.raises(UserError, match=rf"^{rows}:2: a row must be a JSON object, not list"):
        read_rows(rows)
    with pytest.raises(UserError, match="cannot read the rows"):
        read_rows(tmp_path / "missing.jsonl")


def test_rows_that_are_not_dicts_are_refused_naming_the_row():
    with pytest.raises(UserError, match="^row 1: a row must be a dict"):
        read_rows([{"a": 1}, 5])
    with pytest.raises(UserError, match="not one dict"):
        read_rows({"a": 1})
    assert read_rows(iter([{"a": 1}]))[0].data == {"a": 1}  # any iterable


# -- the template -------------------------------------------------------------------


def test_the_template_fills_fields_and_a_rows_values_are_never_formatted_again():
    template = Template.parse("Review {path} for {kind}")
    row = read_rows([{"path": "{kind}/x.py", "kind": "bugs"}])[0]
    assert row_prompt(template, row) == "Review {kind}/x.py for bugs"
    assert template.fields == ("path", "kind") and template.prefix == "Review "


def test_a_missing_field_names_the_row_and_the_field(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"path": "a.py"}\n{"file": "b.py"}\n')
    table = read_rows(rows)
    with pytest.raises(UserError, match=rf"^{rows}:2: the template's field 'path' is not in the row \(it has file\)"):
        row_prompt(Template.parse("Review {path}"), table[1])


@pytest.mark.parametrize("text", ["Review {path", "Review {}", "Review {0}", "  "])
def test_a_bad_template_is_one_error(text):
    with pytest.raises(UserError, match="template"):
        Template.parse(text)


def test_without_a_template_the_row_goes_as_its_json():
    assert row_prompt(None, read_rows([{"b": 1, "a": "x"}])[0]) == '{"a":"x","b":1}'


# -- the journal --------------------------------------------------------------------


def _outcome(key: str, status: str = "completed", **fields) -> dict:
    return {"row": 0, "key": key, "status": status, **fields}


def test_the_journal_is_read_back_and_a_torn_last_line_is_dropped(tmp_path):
    path = tmp_path / "out.jsonl"
    journal = MapJournal(path)
    journal.record(_outcome("k1", result="one"))
    journal.record(_outcome("k2", "failed", error="boom"))
    journal.close()
    assert os.stat(path).st_mode & 0o777 == 0o600  # what the agents answered: this user's only
    with path.open("ab") as handle:
        handle.write(b'{"row": 2, "key": "k3", "sta')  # killed mid-write
    again = MapJournal(path)
    assert again.dropped_tail and set(again.outcomes) == {"k1", "k2"}
    assert again.done("k1") and again.done("k2") and not again.done("k2", retry_failed=True)
    again.record(_outcome("k3"))
    again.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["key"] for line in lines] == ["k1", "k2", "k3"]  # the torn line gone, nothing joined to it


def test_a_line_covey_did_not_write_is_one_error_naming_file_and_line(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(_outcome("k1")) + "\nnot json\n")
    with pytest.raises(UserError, match=rf"^{path}:2: not a line covey map wrote"):
        MapJournal(path)
    path.write_text(json.dumps({"key": "k1", "status": "maybe"}) + "\n")
    with pytest.raises(UserError, match=rf"^{path}:1: not a row's outcome"):
        MapJournal(path)


# -- the runner ---------------------------------------------------------------------


class Rows:
    """A stand-in for the agents: each row's attempts scripted by its ``fail`` field."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.calls: list[tuple[int, int]] = []
        self.completed: list[int] = []
        self.running = self.peak = 0
        self.delay_s = delay_s

    async def run_row(self, row, prompt, attempt):
        self.calls.append((row.index, attempt))
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.running -= 1
        behaviour = row.data.get("fail", 0)
        if behaviour == "budget":
            return RowResult(status="stopped", error="the session budget of $1.00 is spent")
        if behaviour == "raise":
            raise RuntimeError("its actor died")
        if attempt <= behaviour:
            return RowResult(status="failed", error=f"attempt {attempt} failed", cost_usd=0.5, duration_ms=100)
        self.completed.append(row.index)
        return RowResult(status="completed", result=f"done {prompt}", cost_usd=1.0, turns=1, session_id=f"s{row.index}",
                         tokens={"input": 10, "output": 2}, duration_ms=1000, rate_wait_s=0.25)


def _run(rows, agents, journal, **options):
    table = read_rows(rows)
    template = Template.parse("do {n}")
    runner = MapRunner(journal, agents.run_row, **options)
    return asyncio.run(runner.run(table, {row.key: row_prompt(template, row) for row in table}))


def test_every_row_runs_once_within_the_concurrency_and_the_summary_adds_up(tmp_path):
    agents, journal = Rows(delay_s=0.01), MapJournal(tmp_path / "out.jsonl")
    summary = _run([{"n": i} for i in range(10)], agents, journal, concurrency=3)
    assert sorted(agents.completed) == list(range(10)) and agents.peak == 3
    assert (summary.total, summary.completed, summary.failed, summary.skipped, summary.not_run) == (10, 10, 0, 0, 0)
    assert summary.cost_usd == 10.0 and summary.tokens == {"input": 100, "output": 20}
    assert summary.rate_limit_share == pytest.approx(0.25)
    assert "10 completed" in summary.text()
    assert journal.outcomes[read_rows([{"n": 4}])[0].key]["result"] == "done do 4"


def test_a_rerun_with_the_same_journal_runs_only_the_rows_without_an_outcome(tmp_path):
    path = tmp_path / "out.jsonl"
    rows = [{"n": i} for i in range(6)]
    journal = MapJournal(path)
    for row in read_rows(rows)[:4]:  # four rows ended before the map was killed
        journal.record(_outcome(row.key, result="earlier"))
    journal.close()
    agents = Rows()
    summary = _run(rows, agents, MapJournal(path), concurrency=2)
    assert sorted(agents.completed) == [4, 5] and summary.skipped == 4 and summary.completed == 2
    keys = [json.loads(line)["key"] for line in path.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 6  # each row once in the output
    again = Rows()
    assert _run(rows, again, MapJournal(path)).skipped == 6 and again.calls == []  # nothing left: nothing runs


def test_a_failed_row_is_retried_then_journaled_failed_with_its_error(tmp_path):
    agents, journal = Rows(), MapJournal(tmp_path / "out.jsonl")
    rows = [{"n": 0, "fail": 1}, {"n": 1, "fail": 5}, {"n": 2, "fail": "raise"}]
    summary = _run(rows, agents, journal, retries=2)
    table = read_rows(rows)
    recovered, failed, raised = (journal.outcomes[row.key] for row in table)
    assert recovered["status"] == "completed" and recovered["attempts"] == 2
    assert failed["status"] == "failed" and failed["attempts"] == 3 and failed["error"] == "attempt 3 failed"
    assert raised["status"] == "failed" and raised["error"] == "RuntimeError: its actor died"
    assert (summary.completed, summary.failed, summary.retried) == (1, 2, 1 + 2 + 2)
    assert summary.cost_usd == 1.0 + 0.5 + 1.5  # failed attempts cost too


def test_failed_rows_run_again_only_when_asked(tmp_path):
    path = tmp_path / "out.jsonl"
    rows = [{"n": 0, "fail": 1}]
    _run(rows, Rows(), MapJournal(path))
    assert _run(rows, (agents := Rows()), MapJournal(path)).skipped == 1 and agents.calls == []
    summary = _run(rows, (agents := Rows()), MapJournal(path), retry_failed=True)
    # The row was tried again (its fail: 1 fails the first attempt of every run) and its new outcome replaces the old.
    assert agents.calls == [(0, 1)] and summary.failed == 1
    assert len(path.read_text().splitlines()) == 2 and MapJournal(path).outcomes[read_rows(rows)[0].key]["status"] == "failed"


def test_a_spent_budget_stops_the_map_and_leaves_its_rows_for_the_next_run(tmp_path):
    path = tmp_path / "out.jsonl"
    rows = [{"n": 0}, {"n": 1, "fail": "budget"}, {"n": 2}, {"n": 3}]
    summary = _run(rows, Rows(), MapJournal(path), concurrency=1)
    assert summary.stopped and "budget" in summary.stopped and "run the same command again" in summary.text()
    assert (summary.completed, summary.not_run) == (1, 3)
    assert len(MapJournal(path).outcomes) == 1  # the stopped row has no outcome: a later run runs it


def test_a_cancelled_map_journals_no_row_that_was_in_flight(tmp_path):
    path = tmp_path / "out.jsonl"
    agents = Rows(delay_s=5)

    async def go():
        table = read_rows([{"n": i} for i in range(3)])
        runner = MapRunner(MapJournal(path), agents.run_row, concurrency=3)
        task = asyncio.ensure_future(runner.run(table, {row.key: "p" for row in table}))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert len(agents.calls) == 3 and not Path(path).exists()


# -- what covey map shows -------------------------------------------------------------


def test_the_display_writes_a_stream_json_line_per_change_and_draws_a_bar(tmp_path):
    import io

    from covey.rowmap.progress import MapDisplay

    lines, bar = io.StringIO(), io.StringIO()
    display = MapDisplay(lines=lines, bar=bar)
    summary = _run([{"n": 0}, {"n": 1, "fail": 1}], Rows(), MapJournal(tmp_path / "out.jsonl"), on_progress=display)
    display.summary(summary)
    shown = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert [line.get("event", line["type"]) for line in shown] == ["start", "row", "row", "end", "map_summary"]
    failed = next(line for line in shown if line.get("status") == "failed")
    assert failed["error"] == "attempt 1 failed" and "result" not in failed  # the answer is in the output, not here
    assert shown[-2]["completed"] == 1 and shown[-2]["failed"] == 1 and shown[-2]["running"] == 0
    assert "2/2" in bar.getvalue() and "1 failed · 0 running · 0 queued" in bar.getvalue()


def test_a_journal_of_another_task_is_refused_naming_both(tmp_path):
    path = tmp_path / "out.jsonl"
    journal = MapJournal(path, task="Review {path}")
    journal.record(_outcome("k1"))
    journal.close()
    assert json.loads(path.read_text())["task"] == "Review {path}"
    assert MapJournal(path, task="Review {path}").done("k1")
    with pytest.raises(UserError, match=rf"^{path}:1: an outcome of another task \('Review {{path}}', not 'Summarise {{path}}'\)"):
        MapJournal(path, task="Summarise {path}")


def test_a_notebook_shows_one_progress_line_updated_in_place(tmp_path):
    from covey.rowmap.progress import NotebookProgress

    shown: list[str] = []

    class Handle:
        def update(self, obj):
            shown.append(repr(obj))

    def display(obj, display_id):
        shown.append(repr(obj))
        return Handle()

    _run([{"n": 0}, {"n": 1}], Rows(), MapJournal(None), on_progress=NotebookProgress(display))
    assert shown[0] == "covey map: starting" and shown[-1].startswith("covey map: 2/2 rows · 0 failed · 0 running")
