"""Coordinator mode as a user meets it: the environment variable (covey's, or Claude Code's) through
the ``covey`` command, with the corpus under tests/data/claude_files/coordinator."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.test_cli import covey
from tests.inprocess_covey import covey_here

CORPUS = Path(__file__).parents[1] / "data" / "claude_files" / "coordinator"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(CORPUS / "three_workers.yaml", tmp_path / "three_workers.yaml")
    return Path(shutil.copytree(CORPUS / "project", tmp_path / "project"))


def _agents(done) -> list[str]:
    return [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ") and "· model:" in line]


def test_covey_agents_lists_worker_and_the_projects_own_types_in_coordinator_mode(project, tmp_path):
    env = {"HOME": str(tmp_path / "home"), "COVEY_COORDINATOR_MODE": "", "CLAUDE_CODE_COORDINATOR_MODE": "1"}
    done = covey("agents", cwd=project, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert _agents(done) == ["worker", "reviewer"] and "Coordinator mode is on" in done.stdout
    off = covey("agents", cwd=project, env={**env, "CLAUDE_CODE_COORDINATOR_MODE": ""}, timeout=60)
    assert "worker" not in _agents(off) and "general-purpose" in _agents(off)


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_covey_p_runs_the_three_worker_flow_and_answers_after_the_last_notification(project, tmp_path):
    done = covey_here("-p", "Make greet handle an empty name", "--model", "scripted:../three_workers.yaml",
                      "--output-format", "stream-json", "--verbose", cwd=project,
                      env={"COVEY_COORDINATOR_MODE": "1"})  # HOME: the test session's, as its actors have
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["tools"] == ["TaskStop", "SendMessage", "Agent"] and events[0]["agents"] == ["reviewer", "worker"]
    started = [e for e in events if e.get("subtype") == "task_started"]
    notified = [e["task_id"] for e in events if e.get("subtype") == "task_notification"]
    assert len(started) == 3 and len(notified) == 4 and notified[1] == notified[3]  # the implementer, twice
    last_notice = max(i for i, e in enumerate(events) if e.get("subtype") == "task_notification")
    assert events[-1]["type"] == "result" and len(events) - 1 > last_notice
    assert "REPORT_COMPLETE" in events[-1]["result"] and not events[-1]["is_error"]
