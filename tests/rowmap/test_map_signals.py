"""``covey map`` stopped by SIGINT (Ctrl-C) in the middle, in a process of its own on a private Ray
(``--no-service``): it exits 130 with one line saying what to do, leaves no process behind, its
output holds only the rows that ended; the same command again runs only the others, and the
output then holds each row once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.scenario import covey_env, start_covey, wait_for, wait_gone

pytestmark = [pytest.mark.faults, pytest.mark.ray]

ROWS = 12


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_ctrl_c_leaves_the_rows_in_flight_for_the_same_command_again(tmp_path):
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps({"n": n}) + "\n" for n in range(ROWS)))
    (tmp_path / "rules.yaml").write_text("rules:\n  - when: {last_message_contains: 'row '}\n"
                                         "    reply: {text: done}\n    latency_s: 0.5\n")
    out = tmp_path / "out.jsonl"
    args = ["map", "row {n}: say done", "--input", "rows.jsonl", "--output", str(out), "-j", "2", "--no-service",
            "--model", f"scripted:{tmp_path / 'rules.yaml'}"]
    env = covey_env(tmp_path, "http://127.0.0.1:9")
    proc = start_covey(args, tmp_path, env)
    try:
        wait_for(lambda: len(_lines(out)) >= 3, 180, "three rows ended", proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted by SIGINT" in err and "run the same command again" in err and "Traceback" not in err
    assert wait_gone(env["RAY_TMPDIR"]) == []  # its private Ray and every agent process are gone
    ended = {line["row"] for line in _lines(out)}
    assert 3 <= len(ended) < ROWS
    again = subprocess.run([sys.executable, "-m", "covey", *args,
                            "--output-format", "json"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    summary = json.loads(again.stdout)
    assert (summary["skipped"], summary["completed"]) == (len(ended), ROWS - len(ended))
    assert sorted(line["row"] for line in _lines(out)) == list(range(ROWS))  # each row once
