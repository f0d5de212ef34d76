"""``durability``: what the registry's journal costs per launch, and how long a served session's
registry takes to serve again after a SIGKILL with 100 running agents (docs/durability.md).

- ``journal_write_us``: one ``launched`` entry (the record, a spec of the built-in
  general-purpose type with a 2 KB prompt, a real Ray actor handle: pickled, base64, one JSON
  line, flushed), the cost a launch pays, median and p90 of ``n`` writes.
- ``restart``: a session kit's registry (from a shared pool, as the covey service lends it)
  whose journal names 100 running agents (stand-in actors that never end, so each is watched
  again), SIGKILLed; the seconds until it answers again (``RegistryHandle.back``: Ray's
  restart, the journal read, the books rebuilt, 100 watches started) and until a launch check
  (``reserve``) is answered. Goal (issue 28): under 5 s.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import ray

from benchmarks.common import log, summary
from covey.agent.handle import AgentHandle
from covey.definitions.builtin import builtin_agents
from covey.ray.local import NAMESPACE
from covey.registry.core import Registry
from covey.registry.journal import RegistryJournal
from covey.runtime.limits import Limits
from covey.runtime.records import LaunchRequest
from covey.runtime.spec import AgentSpec


@ray.remote(num_cpus=0)
class _Stand:
    """An agent actor whose run never ends: the restarted registry watches it again."""

    async def report_for(self, agent_id: str) -> Any:
        await asyncio.Event().wait()


def _launch_entry(agent_id: str, actor: AgentHandle) -> tuple[Any, AgentSpec, AgentHandle]:
    definition = builtin_agents()["general-purpose"]
    request = LaunchRequest(agent_id=agent_id, parent_agent_id="main", depth=1, description="review a module",
                            prompt="x" * 2000, agent_type="general-purpose", model="claude-sonnet-4-6", cwd="/tmp",
                            background=True)
    record = Registry(Limits(max_concurrent=1000)).reserve(request)
    spec = AgentSpec(session_id="s", agent_id=agent_id, definition=definition, prompt=request.prompt,
                     model_id="claude-sonnet-4-6", cwd="/tmp", tool_names=["Read", "Grep", "Glob", "Bash"])
    return record, spec, actor


def _write_cost(tmp: Path, actor: AgentHandle, n: int) -> dict[str, Any]:
    journal = RegistryJournal(tmp / "journal.jsonl")
    journal.begin("s")
    entries = [_launch_entry(f"agent-{i}", actor) for i in range(n)]
    times = []
    for i, entry in enumerate(entries):
        started = time.perf_counter()
        journal.write("launched", agent_id=f"agent-{i}", output_file="/t/x.jsonl", payload=entry)
        times.append((time.perf_counter() - started) * 1e6)
    journal.close()
    return {**summary(times, 1), "bytes_per_entry": journal.path.stat().st_size // max(n, 1)}


async def _restart(agents: int) -> dict[str, Any]:
    from covey.pool.shared_pool import SharedPoolHandle

    name = f"covey:bench-pool-{uuid.uuid4().hex[:6]}"
    pool = SharedPoolHandle.create(name, ray.get_runtime_context().get_node_id(), floors={"kit": 1, "home": 0})
    try:
        kit = await pool.take_kit()
        registry, _ = kit.handles()
        await registry.configure(Limits(max_concurrent=1000))
        stand = AgentHandle(_Stand.options(namespace=NAMESPACE).remote(), "stand")
        journal = RegistryJournal.for_actor(kit.names[0])
        journal.reopen()
        for i in range(agents):
            journal.write("launched", agent_id=f"agent-{i}", output_file=None, payload=_launch_entry(f"agent-{i}", stand))
        journal.close()
        pid = await registry.actor.__ray_call__.remote(lambda self: os.getpid())
        started = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.05)
        back = await registry.back(wait_s=60)
        serving_s = time.monotonic() - started
        answer = await registry.reserve(LaunchRequest(
            agent_id="after", parent_agent_id="main", depth=1, description="d", prompt="p",
            agent_type="general-purpose", model="m", cwd="/tmp", background=True))
        launch_s = time.monotonic() - started
        records = await registry.records()
        return {"agents": agents, "back": back, "serving_again_s": round(serving_s, 3),
                "launch_check_answered_s": round(launch_s, 3), "records_after": len(records),
                "running_after": sum(1 for r in records if r.status == "running"),
                "reserved": getattr(answer, "agent_id", None) == "after"}
    finally:
        await pool.shutdown()
        pool.kill()


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    stand = AgentHandle(_Stand.options(namespace=NAMESPACE).remote(), "stand")
    writes = _write_cost(tmp, stand, 50 if quick else 300)
    log(f"durability: a journal entry per launch {writes['p50']} us (p90 {writes['p90']}), {writes['bytes_per_entry']} B")
    restart = await _restart(20 if quick else 100)
    log(f"durability: a registry with {restart['agents']} running agents serves again {restart['serving_again_s']} s "
        f"after SIGKILL (a launch check answered at {restart['launch_check_answered_s']} s)")
    return {"journal_write_us": writes, "restart": restart, "goals": {"journal_write_ms_max": 1.0, "restart_s_max": 5.0}}
