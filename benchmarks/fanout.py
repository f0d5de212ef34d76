"""``fanout``: a parent launches N background children in one message; each child takes three 200 ms turns.

Figure: from the parent's first model request to its last reply (the answer
after the last notification), from the logging model's timestamps. Baselines in
the same run: N in-process ``AgentRunner``s running the very child specs covey
builds (same tools, prompts, transcripts; no Ray, no registry, no mailbox), and
N bare asyncio tasks of 3 x ``sleep(0.2)`` (the floor, 0.6 s).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from benchmarks.common import log
from benchmarks.scripts import MAIN, NOTICE, LoggingModel, agent_call, new_session, read_log, rule, scripted, three_turn_child
from covey.agent.actor import AgentRunner
from covey.agent.catalog import tool_names
from covey.runtime.limits import Limits
from covey.runtime.ports import SessionRuntime
from covey.subagents.agent_schema import agent_input_model
from covey.subagents.children import child_spec

LATENCY_S = 0.2


def _rules(n: int) -> list[dict[str, Any]]:
    calls = [agent_call(f"task {i}", background=True) for i in range(n)]
    return three_turn_child(LATENCY_S) + [
        rule({**MAIN, "last_message_contains": NOTICE}, {"text": "collected"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": calls}),
    ]


async def _covey(tmp: Path, n: int, session: Any, warm: bool) -> dict[str, Any]:
    log_path = tmp / f"fanout-{n}-{'warm' if warm else 'default'}.jsonl"
    session.options.model = LoggingModel(scripted(_rules(n)), log_path)
    runtime = await session.start()
    size = (await runtime.registry.pool_stats())["sizes"].get("home", 0)
    await runtime.registry.warm(n + 1 if warm else size)
    started = time.monotonic()
    result = await session.run("go")
    driver_s = time.monotonic() - started
    records = read_log(log_path)
    parent = [r for r in records if r["main"]]
    children = [r for r in records if not r["main"]]
    done = sum(1 for r in children if not r["calls"])
    figures = {"children_finished": done, **delivery_counts(result.events, n)}
    if result.is_error or done != n:
        figures["error"] = f"{n - done} of {n} children did not run; parent said {result.result[:100]!r}"
        figures["launch_errors"] = _launch_errors(result.events)
    return figures | {"wall_s": round(parent[-1]["done"] - parent[0]["sent"], 3), "driver_s": round(driver_s, 3),
            "parent_turns": len(parent), "first_child_start_s": round(children[0]["sent"] - parent[0]["done"], 3),
            "last_child_start_s": round(max(_firsts(children)) - parent[0]["done"], 3)}


def delivery_counts(events: list[Any], n: int) -> dict[str, int]:
    """What reached the main agent of the N children's results, from its task notifications:
    ``lost`` (never notified), ``duplicated`` (notified more than once), ``failed``."""
    from collections import Counter

    from covey.events import TaskNotification

    notices = [e for e in events if isinstance(e, TaskNotification)]  # the main agent's: it launched them all
    per_task = Counter(e.task_id for e in notices)
    return {
        "lost": max(0, n - len(per_task)),
        "duplicated": sum(count - 1 for count in per_task.values()),
        "failed": sum(1 for e in notices if e.status != "completed"),
    }


def _session_model(tmp: Path) -> LoggingModel:
    """The session starts with the model class its runs use (each run swaps in its own
    script), so pooled actors preload its module as they would a real session's model."""
    return LoggingModel(scripted([]), tmp / "fanout-unused.jsonl")


def _launch_errors(events: list[Any]) -> dict[str, int]:
    """Distinct error tool_results the parent got for its Agent calls, with counts."""
    from collections import Counter

    from covey.events import UserEvent

    texts = [str(b.get("content"))[:300] for e in events if isinstance(e, UserEvent)
             for b in e.message.get("content", []) if isinstance(b, dict) and b.get("is_error")]
    return dict(Counter(texts))


def _firsts(children: list[dict[str, Any]]) -> list[float]:
    """Each child's first request time (the log is sorted by ``sent``)."""
    return list({r["agent"]: r["sent"] for r in reversed(children)}.values())


async def _baseline_runners(tmp: Path, n: int) -> float:
    """The same child specs, run by N AgentRunners in this process."""
    session = new_session(tmp, scripted(three_turn_child(LATENCY_S)), allowed_tools=["TodoWrite"])
    inputs = [agent_call(f"task {i}", background=True)["input"] for i in range(n)]
    return await run_children_in_process(session, inputs, background=True)


async def run_children_in_process(session: Any, inputs: list[dict[str, Any]], *, background: bool) -> float:
    """Seconds for N ``AgentRunner``s in this process to run the child specs covey builds for
    these ``Agent`` inputs under ``session``'s main agent (no Ray, registry or mailbox)."""
    runtime = SessionRuntime(session_id=session.session_id, registry=None, mailbox=None,
                             definitions=session.definitions, limits=session.limits,
                             transcript_dir=session.options.transcript_dir)
    parent = session.main_spec("go", runtime)
    call_model = agent_input_model(background=background)
    specs = []
    for i, payload in enumerate(inputs):
        spec = await child_spec(parent, session.definitions["general-purpose"], call_model(**payload),
                                agent_id=f"agent-b{i}", tool_use_id=f"toolu_{i}", background=background,
                                available_tools=tool_names())
        specs.append(spec.model_copy(update={"runtime": None}))

    async def one(spec: Any) -> None:
        async for _ in AgentRunner().run(spec):
            pass

    started = time.monotonic()
    await asyncio.gather(*(one(s) for s in specs))
    return time.monotonic() - started


async def _baseline_sleep(n: int) -> float:
    async def one() -> None:
        for _ in range(3):
            await asyncio.sleep(LATENCY_S)

    started = time.monotonic()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.monotonic() - started


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    sizes = (10, 20) if quick else (10, 50, 100)
    out: dict[str, Any] = {"latency_s": LATENCY_S, "turns_per_child": 3, "baseline_runners": {}, "baseline_sleep": {},
                           "warm": {}, "default_pool": {}}
    for n in sizes:
        out["baseline_runners"][str(n)] = round(await _baseline_runners(tmp, n), 3)
        out["baseline_sleep"][str(n)] = round(await _baseline_sleep(n), 3)
    log(f"fanout baselines: runners {out['baseline_runners']} sleep {out['baseline_sleep']}")
    # Warm: one session whose pool is grown to N+1 before each run (children go back to it after).
    session = new_session(tmp, _session_model(tmp), allowed_tools=["TodoWrite"], limits=Limits(max_concurrent=max(sizes) + 10))
    try:
        for n in sizes:
            out["warm"][str(n)] = await _covey(tmp, n, session, warm=True)
            log(f"fanout warm N={n}: {out['warm'][str(n)]}")
    finally:
        session.close()
    # Default pool: a fresh session per N, its default pool ready but not grown.
    for n in sizes if not quick else sizes[:1]:
        session = new_session(tmp, _session_model(tmp), allowed_tools=["TodoWrite"], limits=Limits(max_concurrent=n + 10))
        try:
            out["default_pool"][str(n)] = await _covey(tmp, n, session, warm=False)
            log(f"fanout default pool N={n}: {out['default_pool'][str(n)]}")
        finally:
            session.close()
    for kind in ("warm", "default_pool"):
        for key, fig in out[kind].items():
            if "wall_s" not in fig or "error" in fig:
                continue
            fig["ratio"] = round(fig["wall_s"] / out["baseline_runners"][key], 2)
            fig["ratio_vs_sleep"] = round(fig["wall_s"] / out["baseline_sleep"][key], 2)
    return out
