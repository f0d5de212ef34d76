"""``startup``: ``covey -p ... --model scripted:FILE --output-format stream-json`` as a fresh process.

Each run gets its own RAY_TMPDIR, so it starts (and stops) a private local Ray,
as a user's first command would. Times are from just before the process is
spawned: the ``system/init`` line, the first ``assistant`` line (the scripted
model answers at once, so this is the first model request plus one reply), the
``result`` line, and the process exit (Ray's shutdown included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import log, summary

RULES = "rules:\n  - reply: {text: ok}\n"


def _command(rules: Path, project: Path) -> list[str]:
    exe = Path(sys.executable).parent / "covey"
    head = [str(exe)] if exe.exists() else [sys.executable, "-m", "covey"]
    return [*head, "-p", "say ok", "--model", f"scripted:{rules}", "--output-format", "stream-json",
            "--cwd", str(project)]


def _one(tmp: Path, rules: Path, project: Path) -> dict[str, float]:
    env = {**os.environ, "RAY_TMPDIR": tempfile.mkdtemp(prefix="r", dir=tmp)}
    marks: dict[str, float] = {}
    started = time.monotonic()
    proc = subprocess.Popen(_command(rules, project), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for line in proc.stdout:
        kind = json.loads(line).get("type") if line.startswith("{") else None
        if kind and kind not in marks:
            marks[kind] = time.monotonic() - started
    stderr = proc.stderr.read()
    code = proc.wait()
    marks["exit"] = time.monotonic() - started
    if code != 0 or "assistant" not in marks:
        raise RuntimeError(f"covey -p exited {code}: {stderr[-800:]}")
    return marks


def _import_s() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "import covey.session"], check=True)
    return time.monotonic() - started


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    rules, project = tmp / "rules.yaml", tmp / "proj"
    rules.write_text(RULES)
    project.mkdir()
    runs = [_one(tmp, rules, project) for _ in range(2 if quick else 3)]
    out = {
        "runs": len(runs),
        "init_line_s": summary(r["system"] for r in runs),
        "first_assistant_s": summary(r["assistant"] for r in runs),
        "result_line_s": summary(r["result"] for r in runs),
        "total_s": summary(r["exit"] for r in runs),
        "import_covey_session_s": summary(_import_s() for _ in range(3)),
    }
    log(f"startup: {out}")
    return out
