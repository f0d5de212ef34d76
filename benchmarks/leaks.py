"""``leaks``: many sequential sync spawns, then compare what is alive with before.

One session; R parent runs in sequence, each calling Agent (sync, the child
answers at once) S times, one call per turn (R x S spawns: 20 x 50 = 1,000;
quick: 1 x 50). Before and after (once the pool is back to its size): agent
actor processes, all Ray worker processes under this driver, their open file
descriptors, and the USS of the registry and mailbox actors. Each run's
main-agent actor is let go when its run ends (no teams), so ``delta`` is what
the runs and their spawns left.
"""

from __future__ import annotations

import asyncio
from collections import Counter
import time
from pathlib import Path
from typing import Any

from benchmarks.common import actor_procs, log, open_fds, uss_mib, worker_procs
from benchmarks.scripts import CHILD, MAIN, agent_call, new_session, rule, scripted

LEAK_PARENTS, LEAK_SPAWNS_PER_PARENT = 20, 50
"""Full run: 20 x 50 = 1,000 spawns (pooled actors serve them again and again)."""


def _snapshot() -> dict[str, Any]:
    workers = worker_procs()
    registry, mailbox = actor_procs("_RegistryActor"), actor_procs("_MailboxActor")
    agents = [u for u in (uss_mib(p) for p in actor_procs()) if u is not None]
    return {
        "agent_actors": len(agents), "agent_actors_uss_mib": round(sum(agents), 1),
        "worker_procs": len(workers), "worker_fds": open_fds(workers),
        "registry_uss_mib": round(uss_mib(registry[0]) or 0, 1) if registry else None,
        "mailbox_uss_mib": round(uss_mib(mailbox[0]) or 0, 1) if mailbox else None,
    }


async def _settle(registry: Any, size: int, timeout_s: float = 60) -> None:
    """Wait until the pool is back to its size and nothing is starting (give-backs and refills done)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        stats = await registry.pool_stats()
        if stats["ready"].get("home", 0) >= size and not any(stats["starting"].values()):
            break
        await asyncio.sleep(0.25)
    await asyncio.sleep(1.0)


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    parents, per_parent = (1, 50) if quick else (LEAK_PARENTS, LEAK_SPAWNS_PER_PARENT)
    rules = [
        rule(CHILD, {"text": "child ok"}),
        rule(MAIN, {"tool_use": [agent_call("a sync task", background=False)]}, times=per_parent),
        rule(MAIN, {"text": "done"}),
    ]
    session = new_session(tmp, scripted(rules), allowed_tools=["TodoWrite"])
    try:
        runtime = await session.start()
        size = (await runtime.registry.pool_stats())["sizes"]["home"]
        await runtime.registry.warm(size)
        await _settle(runtime.registry, size)
        before = _snapshot()
        started = time.monotonic()
        for _ in range(parents):
            result = await session.run("go")
            if result.is_error:
                raise RuntimeError(f"leaks: a parent run failed: {result.result[:300]}")
        spawn_s = time.monotonic() - started
        await _settle(runtime.registry, size)
        after = _snapshot()
        every = await runtime.registry.records()
        records = [r for r in every if r.role == "subagent"]
        statuses = dict(Counter(f"{r.role}:{r.status}" for r in every))
        stats = await runtime.registry.pool_stats()
        held = await runtime.registry.held()
    finally:
        session.close()
    delta = {k: round(after[k] - before[k], 1) for k in before if before[k] is not None and after[k] is not None}
    out = {
        "spawns": parents * per_parent, "parents": parents, "completed": sum(r.status == "completed" for r in records),
        "records_by_role_and_status": statuses,
        "seconds": round(spawn_s, 1), "ms_per_spawn": round(spawn_s / (parents * per_parent) * 1e3, 1),
        "before": before, "after": after, "delta": delta,
        "pool_created": stats["created"], "registry_holds": held,
        "fds_per_worker": {"before": round(before["worker_fds"] / max(1, before["worker_procs"]), 1),
                           "after": round(after["worker_fds"] / max(1, after["worker_procs"]), 1)},
    }
    log(f"leaks: {out}")
    return out
