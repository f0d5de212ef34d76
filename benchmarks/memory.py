"""``memory``: USS per live agent, and the most live agents this machine holds.

A live agent is a background child that has started its run and waits in its
first model call (a scripted reply that takes an hour): its spec, tools,
transcript, loop and history are all in memory. For n = 50, 100, 150, 200, 250
(quick: 20) one parent launches n such children in one message; once every one
of them has sent its request, psutil reads the USS of every ``ray::_AgentActor``
process under this driver and the CPU those waiting agents burn over 2 s. The
session is then closed and the next n starts from nothing.

Then the real model's path (``benchmarks/memory_anthropic.py``): the USS of agent actors that
answered through the node's model gateway, the gateway's, and request times through it.

Baseline in the same run: the USS of bare Ray actors (an empty class,
``num_cpus=0``), started 20 at a time, so the figure shows what covey adds to
Ray's own per-actor cost. The ramp stops before free memory could fall under
4 GiB (each new actor counted at the USS seen so far + 10 MiB) or on the first error.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import psutil
import ray

from benchmarks import memory_anthropic
from benchmarks.common import GIB, MIB, actor_procs, log, summary, uss_mib
from benchmarks.scripts import CHILD, MAIN, NOTICE, agent_call, new_session, rule, scripted
from covey.runtime.limits import Limits

FLOOR_BYTES = 4 * GIB
PER_ACTOR_BYTES = 80 * MIB
LIVE_TIMEOUT_S = 600
PARKED_S = 3600.0


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


@ray.remote(num_cpus=0)
class _Bare:
    def ping(self) -> int:
        return 1


def _bare_actor_uss(n: int = 20) -> dict[str, Any]:
    actors = [_Bare.remote() for _ in range(n)]
    ray.get([a.ping.remote() for a in actors])
    uss = [u for u in (uss_mib(p) for p in actor_procs("_Bare")) if u is not None]
    for actor in actors:
        ray.kill(actor)
    return summary(uss, 1)


class _SentModel:
    """Appends the agent's id to ``path`` when a request is sent, then answers like ``inner``."""

    def __init__(self, inner: Any, path: str) -> None:
        self.inner, self.path = inner, path

    async def create(self, request: Any) -> Any:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(f"{request.agent_id}\n")
        return await self.inner.create(request)


def _rules(n: int) -> list[dict[str, Any]]:
    return [
        rule(CHILD, {"text": "never sent"}, PARKED_S),
        rule({**MAIN, "last_message_contains": NOTICE}, {"text": "done"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": [agent_call(f"live task {i}", background=True) for i in range(n)]}),
    ]


async def _live(tmp: Path, n: int) -> dict[str, Any]:
    log_path = tmp / f"live-{n}.log"
    session = new_session(tmp / f"live-{n}", _SentModel(scripted(_rules(n)), str(log_path)), pool_size=4,
                          limits=Limits(max_concurrent=n + 10))
    started = time.monotonic()
    runner = asyncio.ensure_future(session.run("go"))
    try:
        while True:  # every child has sent its first request
            sent = log_path.read_text().split() if log_path.exists() else []
            waiting = set(sent) - set(sent[:1])  # the first request is the parent's
            if len(waiting) >= n:
                break
            if runner.done():
                raise RuntimeError(f"the parent ended early: {runner.result().result[:200]!r}")
            if time.monotonic() - started > LIVE_TIMEOUT_S:
                raise TimeoutError(f"{len(waiting)} of {n} children live after {LIVE_TIMEOUT_S} s")
            await asyncio.sleep(0.5)
        live_s = time.monotonic() - started
        procs = actor_procs()
        uss = [u for u in (uss_mib(p) for p in procs) if u is not None]
        return {
            "agents": len(procs), "live_children": n, "to_live_s": round(live_s, 1),
            "uss_mib": summary(uss, 1), "idle_cpu_percent_all_agents": _idle_cpu_percent(procs),
            "available_gib": round(psutil.virtual_memory().available / GIB, 1),
        }
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        session.close()
        await _gone(timeout_s=60)  # the next step's memory check must see this step's memory freed


async def _gone(timeout_s: float) -> None:
    """Wait until no agent actor process of this driver is left (killed actors take a moment to exit)."""
    deadline = time.monotonic() + timeout_s
    while actor_procs() and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
    await asyncio.sleep(1)


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    steps = (20,) if quick else (50, 100, 150, 200, 250)
    out: dict[str, Any] = {"bare_actor_uss_mib": _bare_actor_uss(), "steps": {}, "max_agents": 0, "stopped": None}
    per_actor = PER_ACTOR_BYTES
    for n in steps:
        if psutil.virtual_memory().available - n * per_actor < FLOOR_BYTES:
            out["stopped"] = f"before {n}: free memory would drop below 4 GiB"
            break
        try:
            step = await _live(tmp, n)
        except Exception as exc:
            out["stopped"] = f"at {n}: {type(exc).__name__}: {exc}"
            break
        out["steps"][str(n)] = step
        per_actor = int((step["uss_mib"]["p50"] + 10) * MIB)
        out["max_agents"], out["uss_mib_at_max"] = n, step["uss_mib"]
        log(f"memory n={n}: {step}")
    if out["max_agents"]:
        out["uss_vs_bare_actor"] = round(out["uss_mib_at_max"]["p50"] / out["bare_actor_uss_mib"]["p50"], 2)
    try:
        out["anthropic_path"] = await memory_anthropic.run(tmp, out["bare_actor_uss_mib"])
    except Exception as exc:
        out["anthropic_path"] = {"error": f"{type(exc).__name__}: {exc}"}
    log(f"memory anthropic path: {out['anthropic_path']}")
    return out
