"""``map``: ``covey map`` over N rows against the fake Messages API with a 600 requests/min limit
(issue 44), through the real command and the covey service it borrows its actors from.

Each row is one model turn (the fake answers "ok"); the fake counts the requests of each row
(by the ``MAPn row i`` its prompt starts with), so a row run twice shows. Scenarios:

- ``full``: N rows, ``-j`` rows at once: results in the output, lost (rows without a line),
  duplicated (lines past one per row; rows the API saw twice), the wall from the command's start
  to its end (and the map's own, from its first row's start: the summary's) against the limit's bound (N requests at 600 a minute: N / 10 seconds; the fake's
  bucket starts full, so its own bound, ``(N - 600) / 10`` s, is shown too), and the service's
  USS (and the whole Ray's, every process of this case's ``RAY_TMPDIR``) after 100 rows and at
  the end.
- ``resume``: the same map into a new output, SIGINT once half the rows have ended (as Ctrl-C
  does), then the same command again: the rows the second run sent that already had an outcome
  (0 is the goal), and the output's rows (each once).

``python -m benchmarks.map [--quick] [--rows N]``; in ``python -m benchmarks.run`` it is a case
of the real command, run before the runner's own Ray.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.cli import _covey
from benchmarks.common import log
from benchmarks.rate_limits import _env, _start_service, _stop
from tests.fake_ratelimited_api import FakeRateLimitedAPI
from tests.faults.scenario import processes_with

RPM = 600
FULL = {"rows": 1000, "at_once": 16}
QUICK = {"rows": 100, "at_once": 16}
GOALS = {"lost": 0, "duplicated": 0, "max_ratio_vs_bound": 1.15, "max_uss_growth": 0.10}


class RowRequests:
    """The fake API's reply: "ok", with each request counted under its map and row."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        found = re.search(r"(MAP\d+) row (\d+)", json.dumps(body["messages"]))
        if found:
            with self._lock:
                key = f"{found.group(1)}:{found.group(2)}"
                self.counts[key] = self.counts.get(key, 0) + 1
        return {"text": "ok"}

    def of(self, mark: str) -> dict[int, int]:
        with self._lock:
            return {int(k.split(":")[1]): n for k, n in self.counts.items() if k.startswith(mark + ":")}


def _uss(env: dict[str, str]) -> dict[str, Any]:
    """The service process's USS, and the whole case's Ray (every process with its RAY_TMPDIR), in MiB."""
    import psutil

    status = subprocess.run([*_covey(), "status", "--json"], env=env, capture_output=True, text=True, timeout=60)
    service_pid = json.loads(status.stdout).get("pid") if status.returncode == 0 else None
    total, service = 0.0, None
    for pid in processes_with(env["RAY_TMPDIR"]):
        try:
            mib = psutil.Process(pid).memory_full_info().uss / 2**20
        except psutil.Error:
            continue
        total += mib
        if pid == service_pid:
            service = round(mib, 1)
    return {"service_uss_mib": service, "all_uss_mib": round(total)}


def _map(env: dict[str, str], project: Path, mark: str, output: Path, at_once: int,
         on_row: Any = None) -> tuple[subprocess.Popen[str], list[dict[str, Any]], float]:
    """Run ``covey map`` to its end (or until ``on_row`` stops it); its stream-json lines and wall."""
    proc = subprocess.Popen([*_covey(), "map", f"{mark} row {{i}}: say ok", "--input", str(project / "rows.jsonl"),
                             "--output", str(output), "-j", str(at_once), "--output-format", "stream-json"],
                            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started, lines = time.monotonic(), []
    assert proc.stdout is not None
    for raw in proc.stdout:
        if raw.startswith("{"):
            lines.append(line := json.loads(raw))
            if on_row is not None and line.get("event") == "row":
                on_row(proc, line)
    proc.wait(timeout=600)
    return proc, lines, time.monotonic() - started


def _outcomes(output: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.read_text().splitlines()] if output.exists() else []


def _full(env: dict[str, str], project: Path, api: FakeRateLimitedAPI, replies: RowRequests, n: int,
          at_once: int) -> dict[str, Any]:
    memory: dict[str, Any] = {}

    def on_row(proc: subprocess.Popen[str], line: dict[str, Any]) -> None:
        if line["completed"] == min(100, n) and "after_100" not in memory:
            memory["after_100"] = _uss(env)

    served_before = api.count(200)
    proc, lines, wall = _map(env, project, "MAP1", project / "full.jsonl", at_once, on_row)
    memory["at_end"] = _uss(env)
    outcomes = _outcomes(project / "full.jsonl")
    rows = {o["row"] for o in outcomes}
    requests = replies.of("MAP1")
    bound = n / (RPM / 60)
    summary = lines[-1] if lines and lines[-1]["type"] == "map_summary" else {}
    before, after = (memory.get("after_100") or {}).get("service_uss_mib"), memory["at_end"]["service_uss_mib"]
    return {"rows": n, "at_once": at_once, "exit": proc.returncode, "results": len(outcomes),
            "completed": sum(1 for o in outcomes if o["status"] == "completed"), "lost": n - len(rows),
            "duplicated": len(outcomes) - len(rows), "rows_requested_twice": sum(1 for c in requests.values() if c > 1),
            "served": api.count(200) - served_before, "http_429": api.count(429), "wall_s": round(wall, 1),
            "bound_s": round(bound, 1), "ratio_vs_bound": round(wall / bound, 3),
            "map_wall_s": summary.get("wall_s") and round(summary["wall_s"], 1),
            "map_ratio_vs_bound": summary.get("wall_s") and round(summary["wall_s"] / bound, 3),
            "bucket_bound_s": round(max(0.0, (n - RPM) / (RPM / 60)), 1),
            "rate_limit_share": summary.get("rate_limit_share"), "cost_usd": summary.get("cost_usd"),
            "memory": memory, "uss_growth": round(after / before - 1, 3) if before and after else None}


def _resume(env: dict[str, str], project: Path, api: FakeRateLimitedAPI, replies: RowRequests, n: int,
            at_once: int) -> dict[str, Any]:
    """After ``full``, on the same fake API: its bucket is what ``full`` left, so the limit binds here."""
    output = project / "resume.jsonl"
    refused = api.count(429)

    def on_row(proc: subprocess.Popen[str], line: dict[str, Any]) -> None:
        if line["completed"] == n // 2:
            proc.send_signal(signal.SIGINT)  # as Ctrl-C does

    first, _, first_wall = _map(env, project, "MAP2", output, at_once, on_row)
    kept = {o["row"] for o in _outcomes(output)}
    before = replies.of("MAP2")
    second, lines, second_wall = _map(env, project, "MAP2", output, at_once)
    after = replies.of("MAP2")
    sent_again = sorted(row for row in kept if after.get(row, 0) > before.get(row, 0))
    outcomes = _outcomes(output)
    rows = [o["row"] for o in outcomes]
    summary = lines[-1] if lines and lines[-1]["type"] == "map_summary" else {}
    return {"rows": n, "first_exit": first.returncode, "first_wall_s": round(first_wall, 1),
            "http_429": api.count(429) - refused, "second_rate_limit_share": summary.get("rate_limit_share"),
            "second_rate_wait_s": summary.get("rate_wait_s") and round(summary["rate_wait_s"], 1),
            "outcomes_after_interrupt": len(kept), "second_exit": second.returncode,
            "second_wall_s": round(second_wall, 1), "second_ran": (lines[-1] if lines else {}).get("completed"),
            "rows_with_an_outcome_sent_again": len(sent_again), "output_rows": len(outcomes),
            "each_row_once": sorted(rows) == list(range(n)),
            "rows_requested_twice": sum(1 for c in after.values() if c > 1)}


def measure(tmp: Path, rows: int, at_once: int) -> dict[str, Any]:
    project = tmp / "proj"
    project.mkdir(exist_ok=True)
    (project / "rows.jsonl").write_text("".join(json.dumps({"i": i}) + "\n" for i in range(rows)))
    env = _env(tmp)
    env.pop("COVEY_MAX_CONCURRENT_AGENTS", None)
    out: dict[str, Any] = {"goals": GOALS, "rpm": RPM}
    replies = RowRequests()
    try:
        with FakeRateLimitedAPI(requests_per_minute=RPM, reply=replies) as api:
            run_env = {**env, "ANTHROPIC_BASE_URL": api.url}
            out["service_start"] = _start_service(run_env)
            log("map: full")
            out["full"] = _full(run_env, project, api, replies, rows, at_once)
            log(f"map: full {json.dumps(out['full'])}")
            out["resume"] = _resume(run_env, project, api, replies, rows, at_once)
            log(f"map: resume {json.dumps(out['resume'])}")
    finally:
        out["stop"] = _stop(env)
        shutil.rmtree(env["COVEY_SERVICE_DIR"], ignore_errors=True)
        shutil.rmtree(env["RAY_TMPDIR"], ignore_errors=True)
    return out


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    """The benchmark runner's entry (``python -m benchmarks.run --only map``)."""
    sizes = QUICK if quick else FULL
    return await asyncio.to_thread(measure, tmp, sizes["rows"], sizes["at_once"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.map")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK['rows']} rows instead of {FULL['rows']}")
    parser.add_argument("--rows", type=int)
    parser.add_argument("-j", "--at-once", type=int, default=FULL["at_once"])
    parser.add_argument("--out", default="benchmarks/results/map.json")
    args = parser.parse_args(argv)
    from benchmarks.common import prepare_env

    tmp = prepare_env()
    try:
        figures = measure(tmp, args.rows or (QUICK if args.quick else FULL)["rows"], args.at_once)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
