"""``floor_ray``: the floor's replay (``benchmarks.floor``) with one Ray actor per child, as covey
runs each agent: the same request bodies, each child's sent from a process of its own that a
Ray call set going, against a fresh fake API. What N processes and Ray cost on this machine
with nothing of covey in them: the bound of any design that gives every agent its own actor.

The actors are made and ready before the main agent's first request (covey's warm pool); the
driver then calls every child's actor at once, awaits them all, and sends the main agent's later
requests. ``cold``: the actors are made only once the main agent's first answer came, as a first
fan-out with nothing warm meets them: N Ray worker processes started at once on this machine's
cores, the bound of a first fan-out for any design that starts an actor per child then.
``python -m benchmarks.floor_ray URL BODIES.json [cold]`` runs it in a process of its own with a
local Ray of its own (2 CPUs, no dashboard), stopped at its end.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import ray

from benchmarks.floor import _send, by_agent


@ray.remote(num_cpus=0)
class _Agent:
    async def replay(self, host: str, port: int, own: list[dict[str, Any]]) -> int:
        for body in own:
            await _send(host, port, body)
        return len(own)


async def replay_on_actors(url: str, bodies: list[dict[str, Any]], cold: bool = False) -> None:
    host, port, main, children = by_agent(url, bodies)
    if not cold:
        actors = [_Agent.remote() for _ in children]  # type: ignore[attr-defined]
        await asyncio.gather(*(actor.__ray_ready__.remote() for actor in actors))
    if main:
        await _send(host, port, main[0])
    if cold:
        actors = [_Agent.remote() for _ in children]  # type: ignore[attr-defined]
    await asyncio.gather(*(actor.replay.remote(host, port, own) for actor, own in zip(actors, children)))
    for body in main[1:]:
        await _send(host, port, body)


if __name__ == "__main__":
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    try:
        time.sleep(2)  # Ray's own start-up workers done: what a fan-out meets on a Ray already up
        asyncio.run(replay_on_actors(sys.argv[1], json.loads(Path(sys.argv[2]).read_text()), cold="cold" in sys.argv[3:]))
    finally:
        ray.shutdown()
