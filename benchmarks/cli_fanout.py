"""``cli_fanout``: one message of N sync Agent calls through the real ``covey -p``, run
again and again while a CPU burner runs (the scenario that lost results to the pool's
recycling race); each child answers after 1 s.

Figures per run and in total: ``completed`` (tool_results that carry the child's
result), ``lost`` (children whose result never came back), ``duplicated`` (a result
that came back more than once), ``failed`` (error tool_results), and the run's wall
time. Served by the tests' fake Messages API on 127.0.0.1, driven like
``tests/faults``; each run starts and stops its own private Ray.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.common import log
from tests.fake_messages_api import FakeMessagesAPI
from tests.faults.scenario import COVEY, MAIN_MARK, Fanout, covey_env, cpu_burner, wait_gone

CHILD_DELAY_S = 1.0


def _one(tmp: Path, n: int) -> dict[str, Any]:
    fanout = Fanout(n, background=False, delay_s=CHILD_DELAY_S)
    with FakeMessagesAPI(replies=[fanout]) as api:
        env = covey_env(tmp, api.url)
        started = time.monotonic()
        try:
            done = subprocess.run([*COVEY, "-p", f"{MAIN_MARK}: fan out", "--output-format", "json", "--quiet"],
                                  cwd=tmp, env=env, capture_output=True, text=True, timeout=900)
        finally:
            fanout.released.set()
            left = wait_gone(env["RAY_TMPDIR"])
    outcome = fanout.outcome()
    return {
        "wall_s": round(time.monotonic() - started, 2), "exit": done.returncode,
        "completed": sum(outcome.completed.values()),
        "lost": sum(1 for i in range(n) if i not in outcome.completed) - len(outcome.errors),
        "duplicated": sum(count - 1 for count in outcome.completed.values()),
        "failed": len(outcome.errors), "processes_left": len(left),
        "result_is_error": json.loads(done.stdout)["is_error"] if done.stdout.strip() else None,
    }


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    n, runs = (20, 2) if quick else (20, 10)
    out: dict[str, Any] = {"n": n, "runs": [], "child_delay_s": CHILD_DELAY_S, "cpu_burner": True}
    with cpu_burner():
        for i in range(runs):
            figures = await asyncio.to_thread(_one, tmp, n)
            out["runs"].append(figures)
            log(f"cli_fanout run {i + 1}/{runs}: {figures}")
    for key in ("completed", "lost", "duplicated", "failed"):
        out[key] = sum(r[key] for r in out["runs"])
    out["expected"] = n * runs
    return out
