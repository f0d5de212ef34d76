"""Run one covey session whose children ask Ray for resources, and print what happened as JSON.

Run as a separate process (``python drive_resources.py CONFIG_JSON``), as ``drive_session.py`` is.
The main agent launches two background children: ``gpu-worker`` asks for ``num_gpus: 1`` (only
the worker node has a GPU, a fake one) and ``browser-user`` asks for ``browser: 1``, which no
node has. The driver waits until the second one's record says why Ray holds it, keeps what
``covey ps`` prints for the session, then kills it, and the session ends.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import ray

from covey.cli.inspect import session_lines
from covey.definitions.definition import AgentDefinition
from covey.events import TaskNotification
from covey.model.scripted import ScriptedModel
from covey.ray.cluster import ensure_ray
from covey.session import Session

MARKER = "COVEY_RESULT "
MAIN = {"system_contains": "You are covey"}
CHILD = {"system_lacks": "You are covey"}

GPU_WORKER = AgentDefinition.model_validate({
    "name": "gpu-worker", "description": "Needs a GPU.", "prompt": "You train models.", "tools": ["TodoWrite"],
    "resources": {"num_gpus": 1}})
BROWSER_USER = AgentDefinition.model_validate({
    "name": "browser-user", "description": "Needs a node with a browser.", "prompt": "You browse.",
    "tools": ["TodoWrite"], "resources": {"browser": 1}})


def script() -> dict:
    calls = [{"name": "Agent", "input": {"description": f"{kind} task", "prompt": f"{kind.upper()}_TASK",
                                         "subagent_type": kind, "run_in_background": True}}
             for kind in ("gpu-worker", "browser-user")]
    return {"rules": [
        {"when": CHILD, "reply": {"text": "CHILD_DONE"}},
        {"when": {**MAIN, "last_message_contains": "<task-notification>"}, "reply": {"text": "NOTED"}},
        {"when": {**MAIN, "last_tool_result_contains": "Async agent launched"}, "reply": {"text": "LAUNCHED_ALL"}},
        {"when": MAIN, "reply": {"tool_use": calls}},
    ]}


async def held_then_killed(session: Session, out: dict, timeout_s: float) -> None:
    """Wait until the browser child's record says why Ray holds it; keep ``covey ps``'s lines; kill it."""
    registry = session.runtime.registry
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        records = await registry.records()
        held = [r for r in records if r.agent_type == "browser-user" and r.waiting_for]
        if held:
            out["waiting_for"] = held[0].waiting_for
            out["ps"] = session_lines(session.session_id[:8], records)
            out["killed"] = await registry.kill_agent(held[0].agent_id, "stopped by the test")
            return
        await asyncio.sleep(0.2)


async def main(config: dict) -> dict:
    ensure_ray(config["address"])
    nodes = {n["NodeID"]: n for n in ray.nodes() if n["Alive"]}
    out: dict = {"gpu_nodes": [nid for nid, n in nodes.items() if n["Resources"].get("GPU")],
                 "driver_node": ray.get_runtime_context().get_node_id(), "waiting_for": None, "ps": []}
    session = Session(cwd=config["cwd"], model=ScriptedModel.from_dict(script()), agents=[GPU_WORKER, BROWSER_USER],
                      pool_size=1, transcript_dir=config["transcripts"], max_turns=6, address=config["address"])
    events: list = []
    try:
        await session.start()
        killer = asyncio.ensure_future(held_then_killed(session, out, config["timeout_s"]))
        try:
            async with asyncio.timeout(config["timeout_s"]):
                async for event in session.stream("Split the work."):
                    events.append(event)
            out["timed_out"] = False
        except TimeoutError:
            out["timed_out"] = True
        await killer
        records = await session.runtime.registry.records()
    finally:
        session.close()
    out["children"] = [{"agent_type": r.agent_type, "status": r.status, "node_id": r.node_id,
                        "report": r.report.text if r.report else None} for r in records if r.role == "subagent"]
    out["notices"] = [e.status for e in events if isinstance(e, TaskNotification)]
    return out


if __name__ == "__main__":
    result = asyncio.run(main(json.loads(sys.argv[1])))
    print(MARKER + json.dumps(result), flush=True)
    ray.shutdown()
