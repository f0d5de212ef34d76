"""Run one covey session against an existing Ray cluster and print what happened as JSON.

Run as a separate process (``python drive_session.py CONFIG_JSON``): a driver can
join only one cluster, and the pytest process may already be joined to its own.
The main agent launches background children of two kinds: ``general-purpose``
(file tools: the "home" lane, pinned to the driver's node) and ``notes-only``
(TodoWrite only: the "any" lane, spread over the cluster). With ``kill_raylet_pid``
set, children on the worker node never answer; once some run there, this
script SIGKILLs that node's raylet and the session must still finish.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time

import ray

from covey.definitions.definition import AgentDefinition
from covey.events import ResultEvent, TaskNotification, TaskStarted
from covey.model.scripted import ScriptedModel
from covey.ray.cluster import ensure_ray
from covey.session import Session

MARKER = "COVEY_RESULT "
MAIN = {"system_contains": "You are covey"}
CHILD = {"system_lacks": "You are covey"}

NOTES_ONLY = AgentDefinition(
    name="notes-only", description="Keeps a todo list; touches no files.",
    prompt="You keep a short todo list and answer in one line.", tools=["TodoWrite"],
)


def asks_first(server: str) -> AgentDefinition:
    """Children that call an MCP tool of their own inline server: in the default mode the call is
    asked, and the question goes up to the session's asker, wherever the child runs."""
    return AgentDefinition.model_validate({
        "name": "asks-first", "description": "Adds with its calculator; touches no files.",
        "prompt": "You add numbers with your calculator.", "tools": ["mcp__calc__add"],
        "mcpServers": [{"calc": {"command": sys.executable, "args": [server]}}]})


class NodeAwareModel:
    """A scripted model whose children answer after ``child_delay_s``, or never on ``hang_node``."""

    def __init__(self, script: dict, child_delay_s: float, hang_node: str | None) -> None:
        self.script, self.child_delay_s, self.hang_node = script, child_delay_s, hang_node
        self.inner = ScriptedModel.from_dict(script)

    async def create(self, request):
        system = json.dumps(request.system, default=str)
        if "You are covey" not in system:  # a child
            if self.hang_node and ray.get_runtime_context().get_node_id() == self.hang_node:
                await asyncio.sleep(3600)  # until its node dies
            await asyncio.sleep(self.child_delay_s)
        return await self.inner.create(request)


def watch_session_actor_options(pin: bool) -> dict:
    """Record the ``.options()`` covey's Session passes to its registry and mailbox actors.

    With ``pin``, add a hard node affinity to the driver's node when covey gives no
    scheduling strategy: a test-side stand-in for what covey should do, so the
    node-loss scenario tests the children, not where Ray happened to put the registry.
    """
    import covey.session.kit as covey_session
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    seen: dict = {}

    def wrap(factory, role):
        def make(**kw):
            cls = factory(**kw)
            original = cls.options

            def options(**opts):
                seen[role] = {"keys": sorted(opts), "scheduling_strategy": repr(opts.get("scheduling_strategy"))}
                if pin and "scheduling_strategy" not in opts:
                    home = ray.get_runtime_context().get_node_id()
                    opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(home, soft=False)
                    seen[role]["pinned_by_test"] = True
                return original(**opts)

            cls.options = options
            return cls
        return make

    covey_session.registry_actor_class = wrap(covey_session.registry_actor_class, "registry")
    covey_session.mailbox_actor_class = wrap(covey_session.mailbox_actor_class, "mailbox")
    return seen


def _node_of(_actor_self) -> str:
    return ray.get_runtime_context().get_node_id()


def log(t0: float, event) -> None:
    what = getattr(event, "subtype", None) or getattr(event, "type", "?")
    detail = getattr(event, "task_id", None) or getattr(event, "result", None) or ""
    print(f"[driver +{time.time() - t0:6.1f}s] {what} {detail} {getattr(event, 'status', '')}", file=sys.stderr, flush=True)


def script(n_file: int, n_nofile: int, n_ask: int = 0) -> dict:
    calls = [
        {"name": "Agent", "input": {"description": f"file task {i}", "prompt": f"FILE_TASK_{i}",
                                    "subagent_type": "general-purpose", "run_in_background": True}}
        for i in range(n_file)
    ] + [
        {"name": "Agent", "input": {"description": f"notes task {i}", "prompt": f"NOTES_TASK_{i}",
                                    "subagent_type": "notes-only", "run_in_background": True}}
        for i in range(n_nofile)
    ] + [
        {"name": "Agent", "input": {"description": f"ask task {i}", "prompt": f"ASK_TASK_{i}",
                                    "subagent_type": "asks-first"}}  # sync: a background agent asks nobody
        for i in range(n_ask)
    ]
    return {"rules": [
        {"when": {**CHILD, "last_tool_result_contains": "42"}, "reply": {"text": "ADDED_42"}},
        {"when": {**CHILD, "messages_contain": "ASK_TASK"},
         "reply": {"tool_use": [{"name": "mcp__calc__add", "input": {"a": 20, "b": 22}}]}},
        {"when": CHILD, "reply": {"text": "CHILD_DONE"}},
        {"when": {**MAIN, "last_message_contains": "<task-notification>"}, "reply": {"text": "NOTED"}},
        {"when": {**MAIN, "last_tool_result_contains": "Async agent launched"}, "reply": {"text": "LAUNCHED_ALL"}},
        {"when": {**MAIN, "last_tool_result_contains": "ADDED_42"}, "reply": {"text": "BOTH_ADDED"}},
        {"when": MAIN, "reply": {"tool_use": calls}},
    ]}


async def main(config: dict) -> dict:
    ensure_ray(config["address"])
    nodes = {n["NodeID"]: n for n in ray.nodes() if n["Alive"]}
    roles = {nid: ("head" if "head_node" in n["Resources"] else "worker" if "worker_node" in n["Resources"] else "?")
             for nid, n in nodes.items()}
    worker_node = next((nid for nid, role in roles.items() if role == "worker"), None)
    kill_pid = config.get("kill_raylet_pid")
    model = NodeAwareModel(script(config["n_file"], config["n_nofile"], config.get("n_ask", 0)),
                           config.get("child_delay_s", 1.0), worker_node if kill_pid else None)
    asked: list[dict] = []

    def on_permission(request) -> bool:  # the root's asker: every question of every node comes here
        asked.append({"agent_id": request.agent_id, "tool_name": request.tool_name, "input": request.input})
        return True

    session = Session(
        cwd=config["cwd"], model=model, agents=[NOTES_ONLY, asks_first(config.get("mcp_server", ""))],
        pool_size=config.get("pool_size", 2), transcript_dir=config["transcripts"], max_turns=8,
        address=config["address"], on_permission=on_permission,
    )
    events, pings, killed_at = [], {}, None
    n_children = config["n_file"] + config["n_nofile"] + config.get("n_ask", 0)
    out: dict = {"aborted": None, "nodes": {nid: {"role": roles[nid], "ip": n["NodeManagerAddress"]} for nid, n in nodes.items()},
                 "driver_node": ray.get_runtime_context().get_node_id()}

    async def ping(task_id: str) -> None:
        actor = await session.runtime.registry.actor_of(task_id)
        if actor is not None:
            try:
                pings[task_id] = await asyncio.wait_for(actor.node_id(), 10)
            except Exception as exc:  # noqa: BLE001 - recorded, the test decides
                pings[task_id] = f"error: {exc}"

    async def kill_when_placed() -> float | None:
        """SIGKILL the worker's raylet once at least one child runs there (and all have started).

        None when every child landed on the head (soft node affinity lets Ray place an
        actor elsewhere), so the test runs the session again rather than kill a node nobody runs on.
        """
        while True:
            records = await session.runtime.registry.records()
            children = [r for r in records if r.role == "subagent"]
            if len(children) == n_children and all(r.node_id for r in children):
                if any(r.node_id == worker_node for r in children):
                    break
                print("[driver] no child on the worker node: nothing killed", file=sys.stderr, flush=True)
                return None
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)  # they are inside their model call now
        os.kill(kill_pid, signal.SIGKILL)
        print(f"[driver] killed raylet {kill_pid}", file=sys.stderr, flush=True)
        return time.time()

    session_actor_options = watch_session_actor_options(pin=config.get("pin_session_actors", False))
    killer = None
    t0 = time.time()
    try:
        runtime = await session.start()
        out["session_actors"] = {
            "registry": await runtime.registry.actor.__ray_call__.remote(_node_of),
            "mailbox": await runtime.mailbox.actor.__ray_call__.remote(_node_of),
        }
        out["session_actor_options"] = session_actor_options
        if kill_pid and worker_node in out["session_actors"].values():
            # Killing the worker would take the session's own actors with it: no point going on.
            out.update(aborted="session actors on the worker node", timed_out=False, children=[])
            return out
        try:
            async with asyncio.timeout(config.get("timeout_s", 70)):
                async for event in session.stream("Split the work among sub-agents."):
                    events.append(event)
                    log(t0, event)
                    if isinstance(event, TaskStarted):
                        asyncio.ensure_future(ping(event.task_id))
                        if kill_pid and killer is None:
                            killer = asyncio.ensure_future(kill_when_placed())
            out["timed_out"] = False
        except TimeoutError:
            out["timed_out"] = True
        out["ended_at"] = time.time()
        if killer is not None and killer.done():
            killed_at = killer.result()
        records = await session.runtime.registry.records()
    finally:
        session.close()
    notices: dict[str, list[str]] = {}
    for event in events:
        if isinstance(event, TaskNotification):
            notices.setdefault(event.task_id, []).append(event.status)
    out.update(
        killed_at=killed_at, asked=asked,
        results=[e.result for e in events if isinstance(e, ResultEvent)],
        is_error=[e.is_error for e in events if isinstance(e, ResultEvent)],
        children=[{
            "agent_id": r.agent_id, "agent_type": r.agent_type, "status": r.status, "node_id": r.node_id,
            "ping_node": pings.get(r.agent_id), "notified": r.notified, "notices": notices.get(r.agent_id, []),
            "report": r.report.text if r.report else None, "ended_at": r.ended_at, "lost_on": r.lost_on,
        } for r in records if r.role == "subagent"],
        main=[{"status": r.status, "node_id": r.node_id} for r in records if r.role != "subagent"],
    )
    return out


if __name__ == "__main__":
    result = asyncio.run(main(json.loads(sys.argv[1])))
    print(MARKER + json.dumps(result), flush=True)
    ray.shutdown()
