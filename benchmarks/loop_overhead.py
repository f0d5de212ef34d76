"""``loop_overhead``: what one turn costs the loop itself, with a zero-latency scripted model.

One agent takes N turns (a TodoWrite call each) and a final answer, three ways:
the bare ``AgentLoop``; ``AgentRunner`` in-process (the same spec the session
builds: transcript, progress, permission gate, no Ray); and the same runner in
an ``AgentActor`` driven through its ``AgentHandle`` (the events cross to the
driver, the inbox drains the mailbox actor each turn, progress goes to the
registry). Per-turn cost is the slope between two N, so fixed costs cancel.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.common import log
from benchmarks.scripts import new_session, todo
from covey.agent.actor import AgentRunner
from covey.agent.catalog import tool_catalog
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.model.scripted import ScriptedModel
from covey.tools.base import ToolContext


def _turns(n: int) -> list[dict[str, Any]]:
    return [todo("in_progress")] * n + [{"text": "done"}]


def _spec(session: Any, n: int, runtime: Any) -> Any:
    spec = session.main_spec("go", runtime)
    return spec.model_copy(update={"model": ScriptedModel.from_turns(_turns(n))})


async def _bare_loop(tmp: Path, n: int) -> float:
    ctx = ToolContext(agent_id="bench", cwd=tmp)
    loop = AgentLoop(
        model=ScriptedModel.from_turns(_turns(n)),
        config=LoopConfig(model_id="claude-sonnet-4-5", system=[{"type": "text", "text": "You are covey."}]),
        executor=ToolExecutor(tool_catalog(), ctx),
    )
    started = time.perf_counter()
    async for _ in loop.run([{"role": "user", "content": "go"}]):
        pass
    return time.perf_counter() - started


async def _runner(session: Any, n: int) -> float:
    spec = _spec(session, n, None)
    started = time.perf_counter()
    async for _ in AgentRunner().run(spec):
        pass
    return time.perf_counter() - started


async def _actor(session: Any, runtime: Any, actor: Any, n: int) -> float:
    spec = _spec(session, n, runtime)
    await runtime.registry.register_main(spec.agent_id, spec.model_id, spec.cwd, "go")
    started = time.perf_counter()
    async for _ in actor.events(spec):
        pass
    return time.perf_counter() - started


def _slope(times: dict[int, list[float]]) -> dict[str, float]:
    (n1, t1), (n2, t2) = sorted((n, statistics.median(ts)) for n, ts in times.items())
    per_turn = (t2 - t1) / (n2 - n1)
    return {"us_per_turn": round(per_turn * 1e6, 1), "fixed_ms": round((t1 - per_turn * (n1 + 1)) * 1e3, 2),
            "median_s": {str(n): round(statistics.median(ts), 4) for n, ts in times.items()}}


def _schema_us(repeats: int = 50) -> float:
    tools = tool_catalog()
    started = time.perf_counter()
    for _ in range(repeats):
        [tool.schema() for tool in tools]
    return (time.perf_counter() - started) / repeats * 1e6


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    sizes, repeats = ((5, 25), 3) if quick else ((10, 60), 5)
    session = new_session(tmp, ScriptedModel.from_turns([]), allowed_tools=["TodoWrite"], pool_size=1)
    runtime = await session.start()
    try:
        actor = await runtime.registry.take("home")
        await runtime.registry.warm(1)  # the refill the take started is done: nothing starts during timing
        await _actor(session, runtime, actor, 2)  # first run in a fresh worker imports covey's modules
        ways = {"loop": lambda n: _bare_loop(tmp, n), "runner": lambda n: _runner(session, n),
                "actor": lambda n: _actor(session, runtime, actor, n)}
        times: dict[str, dict[int, list[float]]] = {w: {n: [] for n in sizes} for w in ways}
        for _ in range(repeats):  # interleaved, so background noise hits every way alike
            for way, fn in ways.items():
                for n in sizes:
                    times[way][n].append(await fn(n))
        actor.kill()
    finally:
        session.close()
    out: dict[str, Any] = {way: _slope(t) for way, t in times.items()}
    out["turns"] = list(sizes)
    out["repeats"] = repeats
    out["ratio_actor_vs_loop"] = round(out["actor"]["us_per_turn"] / out["loop"]["us_per_turn"], 2)
    out["ratio_actor_vs_runner"] = round(out["actor"]["us_per_turn"] / out["runner"]["us_per_turn"], 2)
    out["tool_schemas_us_per_request"] = round(_schema_us(), 1)
    log(f"loop_overhead: {out}")
    return out
