"""``memory``: USS per idle warm agent actor, and the most live agents this machine holds.

One session grows its pool with ``registry.warm(n)`` for n = 50, 100, 150, 200
(quick: 20); after each step psutil reads the USS of every ``ray::_AgentActor``
process under this driver, and the CPU those idle actors burn over 2 s. The
ramp stops before free memory could fall under 4 GiB (each new actor counted at
the USS seen so far + 10 MiB, at least 80 MiB) or on the first error.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks.common import GIB, MIB, actor_procs, log, summary, uss_mib
from benchmarks.scripts import new_session, scripted

FLOOR_BYTES = 4 * GIB
PER_ACTOR_BYTES = 80 * MIB
WARM_TIMEOUT_S = 600


def _idle_cpu_percent(procs: list[Any], window_s: float = 2.0) -> float:
    for p in procs:
        try:
            p.cpu_percent(None)
        except psutil.Error:
            pass
    time.sleep(window_s)
    total = 0.0
    for p in procs:
        try:
            total += p.cpu_percent(None)
        except psutil.Error:
            pass
    return round(total, 1)


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    steps = (20,) if quick else (50, 100, 150, 200)
    out: dict[str, Any] = {"steps": {}, "max_agents": 0, "stopped": None}
    per_actor_seen = 0
    session = new_session(tmp, scripted([]), pool_size=0)
    try:
        runtime = await session.start()
        for n in steps:
            have = len(actor_procs())
            per_actor = max(PER_ACTOR_BYTES, per_actor_seen)
            if psutil.virtual_memory().available - (n - have) * per_actor < FLOOR_BYTES:
                out["stopped"] = f"before {n}: free memory would drop below 4 GiB"
                break
            started = time.monotonic()
            try:
                await asyncio.wait_for(runtime.registry.warm(n), WARM_TIMEOUT_S)
            except Exception as exc:
                out["stopped"] = f"at {n}: {type(exc).__name__}: {exc}"
                break
            warm_s = time.monotonic() - started
            procs = actor_procs()
            uss = [u for u in (uss_mib(p) for p in procs) if u is not None]
            out["steps"][str(n)] = {
                "actors": len(procs), "warm_s": round(warm_s, 1), "actors_per_s": round((n - have) / warm_s, 2),
                "uss_mib": summary(uss, 1), "idle_cpu_percent_all_actors": _idle_cpu_percent(procs),
                "available_gib": round(psutil.virtual_memory().available / GIB, 1),
            }
            per_actor_seen = int((out["steps"][str(n)]["uss_mib"]["p50"] + 10) * MIB)
            out["max_agents"], out["uss_mib_at_max"] = len(procs), out["steps"][str(n)]["uss_mib"]
            log(f"memory n={n}: {out['steps'][str(n)]}")
    finally:
        session.close()
    return out
