"""``covey map`` on the command line: rows from a JSONL file, each outcome a line of the output as
it ends, stream-json progress for a program, the summary; run again, only the rest runs; a bad
row or flag is one line naming what and where, before anything starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from covey.cli.main import main

OK_RULES = Path(__file__).resolve().parents[2] / "covey" / "cli" / "scenarios" / "ok.yaml"


def _rows(tmp_path: Path, *rows: dict) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _map(tmp_path: Path, rows: Path, *flags: str) -> int:
    (tmp_path / "proj").mkdir(exist_ok=True)
    return main(["map", "Summarise {path} in one line", "--input", str(rows), "--output", str(tmp_path / "out.jsonl"),
                 "--model", f"scripted:{OK_RULES}", "--cwd", str(tmp_path / "proj"), *flags])


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")
def test_covey_map_writes_each_rows_outcome_and_a_second_run_runs_only_the_new_rows(tmp_path, capsys):
    rows = _rows(tmp_path, {"path": "a.py"}, {"path": "b.py"})
    assert _map(tmp_path, rows, "--output-format", "stream-json") == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["event"] for line in lines if line["type"] == "map_progress"] == ["start", "row", "row", "end"]
    assert lines[-1]["type"] == "map_summary" and lines[-1]["completed"] == 2
    outcomes = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert sorted(o["input"]["path"] for o in outcomes) == ["a.py", "b.py"] and {o["result"] for o in outcomes} == {"ok"}
    rows = _rows(tmp_path, {"path": "a.py"}, {"path": "b.py"}, {"path": "c.py"})
    assert _map(tmp_path, rows) == 0
    out = capsys.readouterr().out
    assert "3 rows: 1 completed, 0 failed, 2 had an outcome already, 0 not run" in out
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 3


def test_a_row_without_the_templates_field_is_one_line_naming_the_row_before_anything_starts(tmp_path, capsys):
    rows = _rows(tmp_path, {"path": "a.py"}, {"file": "b.py"})
    assert _map(tmp_path, rows) == 1
    err = capsys.readouterr().err
    assert err == f"covey: {rows}:2: the template's field 'path' is not in the row (it has file)\n"
    assert not (tmp_path / "out.jsonl").exists()


def test_a_bad_line_of_the_input_is_one_line_naming_file_and_line(tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"path": "a.py"}\n{"path": \n')
    assert _map(tmp_path, rows) == 1
    assert capsys.readouterr().err.startswith(f"covey: {rows}:2: not a JSON object")


def test_a_map_refuses_resume_flags(tmp_path, capsys):
    assert _map(tmp_path, _rows(tmp_path, {"path": "a.py"}), "--resume", "abc") == 1
    assert "--resume does not apply" in capsys.readouterr().err


def test_a_terminal_gets_the_bar_a_program_the_lines_and_quiet_or_verbose_neither(monkeypatch):
    import argparse
    import io

    from covey.cli.map_command import display_for

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stderr", Terminal())
    flags = dict(output_format="text", quiet=False)
    assert display_for(argparse.Namespace(**flags), {}).progress is not None
    assert display_for(argparse.Namespace(**{**flags, "quiet": True}), {}).progress is None
    assert display_for(argparse.Namespace(**flags), {"verbose": True}).progress is None
    shown = display_for(argparse.Namespace(**{**flags, "output_format": "stream-json"}), {})
    assert shown.progress is None and shown.lines is not None
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert display_for(argparse.Namespace(**flags), {}).progress is None


@pytest.mark.parametrize("flags", [["--detach"], ["--trace", "t.json"], ["--permission-prompt-tool", "stdio"]])
def test_what_only_covey_p_does_is_refused(tmp_path, capsys, flags):
    assert _map(tmp_path, _rows(tmp_path, {"path": "a.py"}), *flags) == 1
    assert "are for covey -p" in capsys.readouterr().err


def test_a_map_whose_rows_all_have_an_outcome_answers_without_starting_anything(tmp_path, capsys):
    rows = _rows(tmp_path)  # no rows at all: nothing to run (an unmarked test may not start Ray)
    assert _map(tmp_path, rows) == 0
    assert "covey map: 0 rows: 0 completed" in capsys.readouterr().out


def test_covey_map_over_rows_that_all_have_an_outcome_returns_them_without_ray(tmp_path):
    import covey
    from covey.rowmap.journal import MapJournal
    from covey.rowmap.rows import read_rows

    rows = [{"path": "a.py"}, {"path": "b.py"}]
    journal = MapJournal(tmp_path / "out.jsonl", task="Summarise {path}")
    for row in read_rows(rows):
        journal.record({"row": row.index, "key": row.key, "input": row.data, "status": "completed",
                        "result": f"about {row.data['path']}"})
    journal.close()
    results = covey.map("Summarise {path}", rows, output=str(tmp_path / "out.jsonl"))
    assert [r["result"] for r in results] == ["about a.py", "about b.py"]


def test_the_exit_status_says_whether_every_row_has_a_completed_outcome_earlier_runs_included(tmp_path, capsys):
    from covey.rowmap.journal import MapJournal
    from covey.rowmap.rows import read_rows

    rows = _rows(tmp_path, {"path": "a.py"}, {"path": "b.py"})
    journal = MapJournal(tmp_path / "out.jsonl", task="Summarise {path} in one line")
    for row, status in zip(read_rows(rows), ("completed", "failed")):
        journal.record({"row": row.index, "key": row.key, "input": row.data, "status": status})
    journal.close()
    assert _map(tmp_path, rows) == 1  # nothing ran, but b.py's outcome is a failure
    assert "2 had an outcome already" in capsys.readouterr().out
