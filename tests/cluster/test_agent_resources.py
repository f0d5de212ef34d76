"""Agents that ask Ray for resources, on the two-node test cluster (tests/cluster/conftest.py).

The worker node has a fake GPU (``"GPU": 1`` in its ``ray start --resources``); the head has none,
and no node has a ``browser``. A child whose definition asks for ``num_gpus: 1`` must run on the
worker, though placement prefers the session's node; a child asking for ``browser: 1`` must be
held by Ray with its reason in ``covey ps``, not hang the run, and a kill must end it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cluster._cluster import marked_json

pytestmark = pytest.mark.ray  # a two-node cluster of `ray start` nodes, and a driver joining it

DRIVER = Path(__file__).with_name("drive_resources.py")
REPO = Path(__file__).resolve().parents[2]
DRIVER_TIMEOUT_S = 150


@pytest.fixture(scope="module")
def resources_run(two_nodes, tmp_path_factory):
    assert two_nodes.nodes[1].pids_named("raylet"), "the worker node is gone (the node-loss test must run last)"
    tmp_path = tmp_path_factory.mktemp("resources")
    (tmp_path / "proj").mkdir()
    config = {"address": two_nodes.address, "cwd": str(tmp_path / "proj"), "transcripts": str(tmp_path / "t"),
              "timeout_s": DRIVER_TIMEOUT_S - 30}
    env = two_nodes.env(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
                        PYTHONPATH=f"{REPO}:{two_nodes.env().get('PYTHONPATH', '')}".rstrip(":"))
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(DRIVER), json.dumps(config)], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S)
    output = proc.stdout + "\n--- stderr ---\n" + proc.stderr[-6000:]
    assert proc.returncode == 0, f"driver failed ({proc.returncode}):\n{output[-8000:]}"
    result = marked_json(proc.stdout, "COVEY_RESULT ")
    print(json.dumps({**result, "wall_s": round(time.monotonic() - start, 1)}, indent=1))
    assert not result["timed_out"], f"the session did not finish:\n{output[-8000:]}"
    return result


def _child(result: dict, agent_type: str) -> dict:
    return next(child for child in result["children"] if child["agent_type"] == agent_type)


def test_an_agent_asking_for_a_gpu_runs_on_the_node_that_has_one(resources_run):
    assert len(resources_run["gpu_nodes"]) == 1 and resources_run["gpu_nodes"][0] != resources_run["driver_node"]
    gpu = _child(resources_run, "gpu-worker")
    assert gpu["status"] == "completed", gpu
    assert gpu["node_id"] == resources_run["gpu_nodes"][0]


def test_a_request_no_node_can_meet_is_held_with_its_reason_in_ps_and_a_kill_ends_it(resources_run):
    assert resources_run["waiting_for"] == (
        "queued by Ray: no node has browser=1; it starts when a node with them joins (an autoscaler sees the demand)")
    row = next(line for line in resources_run["ps"] if "browser-user" in line)
    assert "queued by Ray: no node has browser=1" in row
    browser = _child(resources_run, "browser-user")
    assert browser["status"] == "killed" and "while Ray held it" in browser["report"]
    assert sorted(resources_run["notices"]) == ["completed", "killed"]
