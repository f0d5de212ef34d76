"""covey on a two-node Ray cluster started on this machine with ``ray start`` (loopback only).

The covey session runs in a subprocess (``drive_session.py``): a driver joins one
cluster only, and this pytest process may already be joined to the test suite's
shared local Ray. The cluster (the session's) is a head node and a worker node, each a
``ray start`` with its own ``RAY_TMPDIR``; both are stopped by pid at the end,
even when a test fails (``ray stop`` would also stop other Rays on the machine).

1. Placement: ``general-purpose`` children (file tools) run on the driver's node;
   ``notes-only`` children (TodoWrite only) go to the "any" lane (the nodes in turn) and reach
   the worker node. Registry records carry each child's node id. The same run sends its
   OpenTelemetry spans to a collector on loopback: one trace, the worker node's children included.
2. Node loss: the worker node's raylet is SIGKILLed while children run there; those
   children go on from their transcripts on the driver's node (the registry revives them),
   each ends ``completed`` with one notification, and the session ends.
   (This test kills the worker node, so it runs last of the module; the cluster is the
   session's, tests/cluster/conftest.py.)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cluster._cluster import marked_json
from tests.otlp_collector import check_tree, collector

pytestmark = pytest.mark.ray  # a two-node cluster of `ray start` nodes, and a driver joining it

DRIVER = Path(__file__).with_name("drive_session.py")
REPO = Path(__file__).resolve().parents[2]
DRIVER_TIMEOUT_S = 150  # generous: a loaded 2-core machine starts actors slowly


def _drive(cluster, tmp_path: Path, env: dict[str, str] | None = None, **config) -> dict:
    (tmp_path / "proj").mkdir(parents=True, exist_ok=True)
    config = {"address": cluster.address, "cwd": str(tmp_path / "proj"), "transcripts": str(tmp_path / "transcripts"),
              "timeout_s": DRIVER_TIMEOUT_S - 30, **config}
    env = cluster.env(
        RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",  # the driver's own address: 127.0.0.1
        PYTHONPATH=f"{REPO}:{cluster.env().get('PYTHONPATH', '')}".rstrip(":"), **(env or {}),
    )
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(DRIVER), json.dumps(config)], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S)
    output = proc.stdout + "\n--- stderr ---\n" + proc.stderr[-6000:]
    assert proc.returncode == 0, f"driver failed ({proc.returncode}):\n{output[-8000:]}"
    result = marked_json(proc.stdout, "COVEY_RESULT ")
    result["wall_s"] = time.monotonic() - start
    print(json.dumps({k: v for k, v in result.items() if k not in ("nodes", "children")}))
    assert not result["timed_out"], f"the session did not finish:\n{output[-8000:]}"
    return result


def _roles(result: dict) -> dict[str, str]:
    return {nid: node["role"] for nid, node in result["nodes"].items()}


def test_both_nodes_are_on_loopback(two_nodes):
    head, worker = two_nodes.nodes
    assert "Local node IP: 127.0.0.1" in _plain(head.output) and "Local node IP: 127.0.0.1" in _plain(worker.output)
    assert head.pids_named("gcs_server") and head.pids_named("raylet") and worker.pids_named("raylet")


@pytest.fixture(scope="module")
def placement_run(two_nodes, tmp_path_factory):
    """One session on the intact cluster, shared by the checks on where things ran."""
    assert two_nodes.nodes[1].pids_named("raylet"), "the worker node is gone (the node-loss test must run last)"
    with collector() as otlp:  # the run's OpenTelemetry spans, sent by the actors of both nodes
        result = _drive(two_nodes, tmp_path_factory.mktemp("placement"), env=otlp.variables(), n_file=2, n_nofile=4)
        deadline = time.monotonic() + 15
        while sum(s["gen_ai.operation.name"] == "invoke_agent" for s in otlp.spans) < 7 and time.monotonic() < deadline:
            time.sleep(0.1)
        result["spans"] = list(otlp.spans)
    return result


def test_the_spans_of_agents_on_both_nodes_are_one_trace_each_child_under_its_agent_call(placement_run):
    """The driver's OTEL_* variables reach the worker node's actors with the session's settings,
    and each child's spec carries its Agent call's traceparent (docs/observability.md)."""
    roles = _roles(placement_run)
    children = placement_run["children"]
    runs = check_tree(placement_run["spans"], agents=1 + len(children))
    on_worker = [c["agent_id"] for c in children if roles.get(c["node_id"]) == "worker"]
    print(f"{len(placement_run['spans'])} spans; children on the worker node: {on_worker}")
    assert on_worker and set(on_worker) <= set(runs)


def test_children_run_on_both_nodes_by_placement_lane(placement_run):
    result = placement_run
    roles = _roles(result)
    assert sorted(roles.values()) == ["head", "worker"]
    assert all(node["ip"] == "127.0.0.1" for node in result["nodes"].values())
    assert roles[result["driver_node"]] == "head"

    children = result["children"]
    assert len(children) == 6 and all(c["status"] == "completed" for c in children)
    assert all(c["notices"] == ["completed"] for c in children)  # exactly one notification each
    # The registry fills node_id when it starts watching a child; a ping to the actor agrees.
    assert all(c["node_id"] in roles for c in children), children
    assert all(c["ping_node"] in (None, c["node_id"]) for c in children), children

    file_nodes = {roles[c["node_id"]] for c in children if c["agent_type"] == "general-purpose"}
    nofile_nodes = [roles[c["node_id"]] for c in children if c["agent_type"] == "notes-only"]
    print("general-purpose on:", file_nodes, "notes-only on:", nofile_nodes)
    assert file_nodes == {"head"}  # file tools: pinned to the node holding the working tree
    assert "worker" in nofile_nodes  # no file tools: the "any" lane takes the alive nodes in turn
    assert {roles[c["node_id"]] for c in children} == {"head", "worker"}
    assert result["results"] and result["results"][-1] == "NOTED" and not any(result["is_error"])


def test_session_actors_are_pinned_to_the_driver_node(placement_run):
    """The registry and mailbox must live on the driver's node: losing any other node must not end the session.

    Checked on the options covey passes (deterministic), not on where Ray happened to put them.
    """
    roles = _roles(placement_run)
    print("session actors on:", {name: roles.get(node) for name, node in placement_run["session_actors"].items()})
    for role, options in placement_run["session_actor_options"].items():
        assert "NodeAffinitySchedulingStrategy" in options["scheduling_strategy"], (
            f"covey bug: the {role} actor is created without node affinity (options {options['keys']}), so Ray may "
            "place it on any node; the kill test has seen it land on the worker node. See covey/session.py start()."
        )


def test_a_child_on_the_worker_node_asks_and_the_root_s_asker_answers(two_nodes, tmp_path):
    """A permission prompt bubbles across nodes: sync children that call an MCP tool of their own (no
    file tools: the "any" lane, which takes the nodes in turn) ask in the default mode; each question
    reaches the session's asker in the driver's process, the answer goes back, and the call runs."""
    assert two_nodes.nodes[1].pids_named("raylet"), "the worker node is gone (the node-loss test must run last)"
    result = _drive(two_nodes, tmp_path, n_file=0, n_nofile=0, n_ask=2, mcp_server=str(REPO / "tests/mcp/server.py"))
    roles = _roles(result)
    children = result["children"]
    assert len(children) == 2 and all(c["status"] == "completed" and c["report"] == "ADDED_42" for c in children), [
        (c["report"], c["status"]) for c in children]
    on_worker = [c["agent_id"] for c in children if roles.get(c["node_id"]) == "worker"]
    assert on_worker, children  # the any lane put one there
    asked = {entry["agent_id"]: entry for entry in result["asked"]}
    assert set(asked) == {c["agent_id"] for c in children}  # each asked once, the worker's too
    assert all(entry["tool_name"] == "mcp__calc__add" and entry["input"] == {"a": 20, "b": 22} for entry in asked.values())
    assert result["results"] == ["BOTH_ADDED"] and not any(result["is_error"])


def test_losing_the_worker_node_revives_its_children_from_their_transcripts_and_each_notifies_once(
    two_nodes, tmp_path,
):
    worker = two_nodes.nodes[1]
    raylets = worker.pids_named("raylet")
    assert len(raylets) == 1
    # pin_session_actors: a guard that pins the registry and mailbox to the driver's node should covey
    # ever stop doing so (test_session_actors_are_pinned_to_the_driver_node fails then), so this checks the children.
    for attempt in range(3):  # a child placed elsewhere (soft affinity) is possible: run again then
        result = _drive(two_nodes, tmp_path / f"attempt{attempt}", n_file=1, n_nofile=3,
                        kill_raylet_pid=raylets[0], pin_session_actors=True)
        if result["killed_at"] is not None or result["aborted"] is not None:
            break
    roles = _roles(result)
    placed = {name: roles.get(node, node) for name, node in result["session_actors"].items()}
    assert result["aborted"] is None, f"the session's own actors are off the driver's node: {placed}"
    assert result["killed_at"] is not None
    assert not worker.pids_named("raylet")
    worker_id = next(nid for nid, role in roles.items() if role == "worker")

    children = result["children"]
    on_worker = [c for c in children if worker_id in c["lost_on"]]  # now on the driver's node
    elsewhere = [c for c in children if not c["lost_on"]]
    assert on_worker, children
    for child in on_worker:  # lost with the node, started again from their transcripts on the driver's node
        assert child["status"] == "completed" and child["node_id"] != worker_id, child
        assert child["notices"] == ["completed"], child  # exactly one notification
    for child in elsewhere:
        assert child["status"] == "completed" and child["notices"] == ["completed"], child
    # The session still finishes: one result per notification turn, the last after the failures.
    assert result["results"][-1] == "NOTED"
    assert max(c["ended_at"] for c in on_worker) <= result["ended_at"]
    print(f"revived children ended {max(c['ended_at'] for c in on_worker) - result['killed_at']:.1f} s after the kill")


def _plain(text: str) -> str:
    """``ray start`` output without its colour codes."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


