"""``spawn_latency`` and ``notify_latency``, timed by ``LoggingModel`` across processes (one machine, one clock).

Spawn: the parent's reply holding an Agent call (its ``done``) → the child's
first model request (its ``sent``). Split at the registry record's
``started_at`` (set when ``launch`` has started the actor): before it, the
parent's loop and Agent tool, the child spec, the registry's checks, the pool
take and ``start``; after it, the child's run set-up (transcript, tools, one
mailbox drain) up to its first request. Sync children, one per parent turn.

Notify (the issue's figure, ``notify_ms``): a background child's final reply
(``done``) → its notice is queued for the parent (the mailbox's ``arrived_at``
stamp on the notice; the child puts it itself, one actor call). Also
``to_parent_request_ms``: → the parent's next request carrying the
``<task-notification>`` (``sent``). ``child_reply_to_registry_ms`` is when the
registry's record of the child ended (``ended_at``): its report comes after the
notice now, so it is no longer on the notice's path;
``registry_to_parent_request_ms`` is the rest up to the parent's request.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.common import log, summary
from benchmarks.scripts import CHILD, MAIN, NOTICE, LoggingModel, agent_call, new_session, read_log, rule, scripted


def _git_project(tmp: Path) -> None:
    project = tmp / "proj"
    project.mkdir(parents=True, exist_ok=True)
    (project / "README.md").write_text("bench\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run([*git, *args], cwd=project, check=True)


async def _run_session(tmp: Path, rules: list[dict[str, Any]], tag: str, **options: Any) -> tuple[list, list, dict]:
    log_path = tmp / f"{tag}.jsonl"
    session = new_session(tmp / tag, LoggingModel(scripted(rules), log_path), **options)
    try:
        runtime = await session.start()
        size = (await runtime.registry.pool_stats())["sizes"].get("home", 0)
        await runtime.registry.warm(size)
        result = await session.run("go")
        if result.is_error:
            raise RuntimeError(f"{tag}: {result.result[:300]}")
        all_records = await runtime.registry.records()
        records = {r.agent_id: r for r in all_records if r.role == "subagent"}
        for main in (r for r in all_records if r.role != "subagent"):  # when each notice reached the parent's queue
            for mail in await runtime.mailbox.history(main.agent_id):
                if (record := records.get(getattr(mail, "task_id", None))) is not None:
                    record.notified_at = mail.arrived_at
    finally:
        session.close()
    entries = read_log(log_path)
    return [e for e in entries if e["main"]], [e for e in entries if not e["main"]], records


async def _spawns(tmp: Path, k: int, tag: str, **options: Any) -> dict[str, Any]:
    rules = [
        rule(CHILD, {"text": "child ok"}),
        rule(MAIN, {"tool_use": [agent_call("a sync task", background=False)]}, times=k),
        rule(MAIN, {"text": "done"}),
    ]
    parent, children, records = await _run_session(tmp, rules, tag, **options)
    calls = sorted(e["done"] for e in parent if "Agent" in e["calls"])
    firsts = sorted({e["agent"]: (e["sent"], e["agent"]) for e in reversed(children)}.values())
    total, launch, setup = [], [], []
    for called, (sent, agent) in zip(calls, firsts):
        total.append((sent - called) * 1e3)
        if (record := records.get(agent)) is not None:
            launch.append((record.started_at - called) * 1e3)
            setup.append((sent - record.started_at) * 1e3)
    return {"spawns": len(total), "total": summary(total, 1), "to_started": summary(launch, 1),
            "started_to_request": summary(setup, 1)}


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    k_warm, k_cold = (10, 3) if quick else (30, 5)
    out: dict[str, Any] = {}
    warm = await _spawns(tmp, k_warm, "warm", allowed_tools=["TodoWrite"])
    out["warm_ms"], out["warm_breakdown_ms"] = warm["total"], warm
    _git_project(tmp / "warm_git")
    git = await _spawns(tmp, max(5, k_warm // 3), "warm_git", allowed_tools=["TodoWrite"])
    out["warm_git_ms"], out["warm_git_breakdown_ms"] = git["total"], git
    cold = await _spawns(tmp, k_cold, "cold", allowed_tools=["TodoWrite"], pool_size=0)
    out["cold_ms"], out["cold_breakdown_ms"] = cold["total"], cold
    log(f"spawn_latency: {out}")
    return out


async def run_notify(tmp: Path, quick: bool) -> dict[str, Any]:
    k = 8 if quick else 20
    call = {"tool_use": [agent_call("a background task", background=True)]}
    rules = [
        rule(CHILD, {"text": "child done"}, 0.3),  # long enough that the parent is parked waiting
        rule({**MAIN, "last_message_contains": NOTICE}, call, times=k - 1),
        rule({**MAIN, "last_message_contains": NOTICE}, {"text": "all done"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, call),
    ]
    parent, children, records = await _run_session(tmp, rules, "notify", allowed_tools=["TodoWrite"])
    notified = [e for e in parent if e["notice"]]
    to_queue, total, to_registry, to_parent = [], [], [], []
    for child in children:
        record = records.get(child["agent"])
        if record is not None and record.notified_at:
            to_queue.append((record.notified_at - child["done"]) * 1e3)
        nxt = next((e for e in notified if e["sent"] >= child["done"]), None)
        if nxt is None:
            continue
        total.append((nxt["sent"] - child["done"]) * 1e3)
        if record is not None and record.ended_at:
            to_registry.append((record.ended_at - child["done"]) * 1e3)
            to_parent.append((nxt["sent"] - record.ended_at) * 1e3)
    out = {"children": len(children), "notify_ms": summary(to_queue, 1), "to_parent_request_ms": summary(total, 1),
           "child_reply_to_registry_ms": summary(to_registry, 1), "registry_to_parent_request_ms": summary(to_parent, 1)}
    log(f"notify_latency: {out}")
    return out
