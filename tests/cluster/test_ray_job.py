"""A covey run submitted as a Ray Job (``JobSubmissionClient``) to a head node started with its dashboard.

The head is the cluster tests' ``ray start --head`` (tests/cluster/conftest.py: loopback,
its own RAY_TMPDIR, its dashboard on), stopped by pid at the end of the session. The project directory (with the scripted model's rule
file) is the job's ``working_dir``; the entrypoint is covey's CLI in print mode with
``--output-format json``, and the result line is read back from the job's logs.
Skipped when the job server cannot run here (``ray[default]`` not installed).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from pathlib import Path

import pytest
import yaml


pytestmark = pytest.mark.ray  # a `ray start --head` with its job server, and a covey run as a Ray job

JOB_TIMEOUT_S = 120

RULES = {"rules": [
    {"when": {"system_lacks": "You are covey"}, "reply": {"text": "CHILD_REPORT_FROM_THE_JOB"}},
    {"when": {"system_contains": "You are covey", "last_message_contains": "<task-notification>"},
     "reply": {"text": "JOB_DONE: the child reported"}},
    {"when": {"system_contains": "You are covey", "last_tool_result_contains": "Async agent launched"},
     "reply": {"text": "waiting for the child"}},
    {"when": {"system_contains": "You are covey"}, "reply": {"tool_use": {"name": "Agent", "input": {
        "description": "note something", "prompt": "Say something short.",
        "subagent_type": "general-purpose", "run_in_background": True}}}},
]}


@pytest.fixture
def dashboard_head(two_nodes):
    """The cluster tests' head (tests/cluster/conftest.py), which runs its dashboard and so the job server."""
    if two_nodes.no_dashboard:
        pytest.skip(two_nodes.no_dashboard)
    return two_nodes


def _client(url: str, timeout_s: float = 60):
    from ray.job_submission import JobSubmissionClient

    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:  # the dashboard may still be coming up after `ray start` returns
        try:
            return JobSubmissionClient(url)
        except Exception as exc:  # noqa: BLE001
            last = exc
            time.sleep(1)
    pytest.skip(f"the job server at {url} did not answer: {last}")


def _submit(client, timeout_s: float = 60, **job) -> str:
    """Submit, retrying while the head's job agent is still starting ("No available agent to submit job")."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return client.submit_job(**job)
        except RuntimeError as exc:
            if "No available agent" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(1)


def test_covey_run_as_a_ray_job(dashboard_head, tmp_path):
    from ray.job_submission import JobStatus

    head = dashboard_head.nodes[0]
    assert "Local node IP: 127.0.0.1" in re.sub(r"\x1b\[[0-9;]*m", "", head.output)
    project = tmp_path / "project"
    project.mkdir()
    (project / "rules.yaml").write_text(yaml.safe_dump(RULES))
    (project / "README.md").write_text("A tiny project for a covey job.\n")
    url = f"http://127.0.0.1:{dashboard_head.dashboard_port}"
    client = _client(url)

    entrypoint = " ".join(shlex.quote(part) for part in [
        sys.executable, "-m", "covey", "-p", "Delegate a small task, then report.",
        "--model", "scripted:rules.yaml", "--output-format", "json", "--quiet", "--max-turns", "8",
    ])
    env_vars = {"RAY_USAGE_STATS_ENABLED": "0", "ANTHROPIC_API_KEY": "test-key-not-real",
                "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "COVEY_POOL_SIZE": "1"}
    start = time.monotonic()
    job_id = _submit(client, entrypoint=entrypoint, runtime_env={"working_dir": str(project), "env_vars": env_vars})
    status = None
    try:
        while time.monotonic() - start < JOB_TIMEOUT_S:
            status = client.get_job_status(job_id)
            if status in {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED}:
                break
            time.sleep(1)
        logs = client.get_job_logs(job_id)
    finally:
        if status not in {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED}:
            client.stop_job(job_id)
    print(f"job {job_id}: {status} after {time.monotonic() - start:.1f} s")
    assert status == JobStatus.SUCCEEDED, f"job ended {status}:\n{logs[-6000:]}"

    results = [json.loads(line) for line in logs.splitlines() if line.startswith("{") and '"result"' in line]
    assert results, f"no result JSON in the job logs:\n{logs[-6000:]}"
    result = results[-1]
    print(json.dumps(result)[:1000])
    assert result["type"] == "result" and not result["is_error"]
    assert result["result"] == "JOB_DONE: the child reported"
