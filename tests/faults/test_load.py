"""Load: every child's result comes back exactly once through the real ``covey`` command."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.fake_messages_api import FakeMessagesAPI
from tests.faults.scenario import COVEY, MAIN_MARK, Fanout, covey_env, cpu_burner, wait_gone

pytestmark = [pytest.mark.faults, pytest.mark.ray]


def _run(fanout: Fanout, tmp_path, timeout_s: int, **env: str) -> subprocess.CompletedProcess:
    with FakeMessagesAPI(replies=[fanout]) as api:
        run_env = covey_env(tmp_path, api.url, **env)
        try:
            done = subprocess.run([*COVEY, "-p", f"{MAIN_MARK}: fan out", "--output-format", "json", "--quiet"],
                                  cwd=tmp_path, env=run_env, capture_output=True, text=True, timeout=timeout_s)
        finally:
            fanout.released.set()
            assert wait_gone(run_env["RAY_TMPDIR"]) == []  # the run stopped everything it started
    return done


def test_fifty_sync_children_with_the_default_pool_under_a_cpu_burner_all_complete(tmp_path):
    """The recycling race: actors coming back to a full pool lane were killed while their
    parent was still receiving the report ("its actor died" for a completed child)."""
    fanout = Fanout(50, background=False, delay_s=1.0)
    with cpu_burner():
        # Not moved to the background however slow the machine is: each result must be a tool_result.
        done = _run(fanout, tmp_path, 420, COVEY_AUTO_BACKGROUND_MS="600000")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["is_error"] is False
    outcome = fanout.outcome()
    assert outcome.errors == []
    assert outcome.completed == {i: 1 for i in range(50)}  # 50 completed tool_results, 0 lost, 0 twice


def test_a_hundred_background_children_notify_the_main_agent_exactly_once_each(tmp_path):
    fanout = Fanout(100, background=True, delay_s=1.0)
    done = _run(fanout, tmp_path, 480)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = fanout.outcome()
    assert len(outcome.notices) == 100
    assert all(statuses == ["completed"] for statuses in outcome.notices.values())
    assert outcome.completed == {i: 1 for i in range(100)}
