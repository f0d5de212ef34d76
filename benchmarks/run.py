"""Run covey's benchmarks and write one JSON file of figures.

    python -m benchmarks.run [--quick] [--only NAME[,NAME]] [--out benchmarks/results/latest.json]

``startup``, ``cli_fanout`` and the other cases of the real ``covey`` command run first, before this process starts its own Ray (each
``covey -p`` starts and stops a private one); every other case shares one local Ray.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from benchmarks.common import log, machine, prepare_env, start_ray

CASES = [
    "cli", "sdk", "startup", "cli_fanout", "rate_limits", "loop_overhead", "fanout", "spawn_latency", "notify_latency", "task_claims", "mailbox", "leaks", "memory", "fork",
    "durability", "permission_checks", "map",
]
CLI_CASES = ("cli", "sdk", "startup", "cli_fanout", "rate_limits", "map")
"""Cases that run the real ``covey`` command, each run with a private Ray: before this process starts one."""
MODULES = {"spawn_latency": "spawn", "notify_latency": "spawn", "task_claims": "teams", "mailbox": "teams"}
FUNCTIONS = {"notify_latency": "run_notify", "task_claims": "run_claims", "mailbox": "run_mailbox"}


def _module(name: str) -> Any:
    import importlib

    return importlib.import_module(f"benchmarks.{MODULES.get(name, name)}")


async def _run_case(name: str, tmp: Path, quick: bool) -> dict[str, Any]:
    case_tmp = tmp / name
    case_tmp.mkdir()
    fn = getattr(_module(name), FUNCTIONS.get(name, "run"))
    started = time.monotonic()
    try:
        figures = await fn(case_tmp, quick)
    except Exception as exc:  # one failing case must not lose the others' figures
        log(f"{name} failed:\n{traceback.format_exc()}")
        figures = {"error": f"{type(exc).__name__}: {exc}"}
    figures["case_wall_s"] = round(time.monotonic() - started, 1)
    return figures


def _write(out: Path, report: dict[str, Any]) -> None:
    out.write_text(json.dumps(report, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run")
    parser.add_argument("--quick", action="store_true", help="small N everywhere (a few minutes)")
    parser.add_argument("--only", help=f"comma-separated cases: {', '.join(CASES)}")
    parser.add_argument("--out", default="benchmarks/results/latest.json")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",")] if args.only else CASES
    if unknown := [n for n in names if n not in CASES]:
        parser.error(f"unknown case(s): {unknown}")
    tmp = prepare_env()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"quick": args.quick, "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
                              "machine": machine(), "cases": {}}
    try:
        for name in [n for n in names if n in CLI_CASES]:
            report["cases"][name] = asyncio.run(_run_case(name, tmp, args.quick))
            _write(out, report)
        rest = [n for n in names if n not in CLI_CASES]
        if rest:
            import ray

            start_ray()
            try:
                for name in rest:
                    log(f"case {name}")
                    report["cases"][name] = asyncio.run(_run_case(name, tmp, args.quick))
                    _write(out, report)  # a long run interrupted later keeps what it measured
            finally:
                ray.shutdown()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _write(out, report)
    from benchmarks.table import render

    print(render(report))
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
