"""Load, through the covey service: every child's result comes back exactly once through
the real ``covey`` command, and the run gives every agent back to the service's pool.

Both tests run on one service (the module's ``served``): the second reuses the actors
the first made, as a user's next run does. The in-process path (``--no-service``, a
private Ray and the session's own WarmPool) is not loaded here: the recycling race it
had is a unit test (tests/registry/test_pool.py), and what is above the pool (registry,
mailbox, notifications) is the same code in both.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fake_messages_api import FakeMessagesAPI
from tests.faults.scenario import MAIN_MARK, Fanout, cpu_burner
from tests.service.served import Served

pytestmark = [pytest.mark.faults, pytest.mark.ray]


def _run(served: Served, fanout: Fanout, cwd: Path, timeout_s: int, **env: str,
         ) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    """The run's output, and the service's status once the run gave everything back."""
    with FakeMessagesAPI(replies=[fanout]) as api:
        try:
            done = served.covey("-p", f"{MAIN_MARK}: fan out", "--output-format", "json", "--quiet",
                                env={"ANTHROPIC_BASE_URL": api.url, **env}, cwd=cwd, timeout=timeout_s)
        finally:
            fanout.released.set()
        # Instead of "no process left": the service lives on, with no session and nothing lent.
        status = served.wait_all_given_back()
    print(f"pool after the run: {status['pool']}")
    return done, status


def test_fifty_sync_children_under_a_cpu_burner_all_complete_and_every_agent_comes_back(served, tmp_path):
    """A burst far over the pool's ready actors, on a loaded machine: the pool starts the
    missing ones at once, and actors coming back must not be lost while their parent
    still receives the report ("its actor died" for a completed child)."""
    fanout = Fanout(50, background=False, delay_s=1.0)
    with cpu_burner():
        # Not moved to the background however slow the machine is: each result must be a tool_result.
        done, _ = _run(served, fanout, tmp_path, 420, COVEY_AUTO_BACKGROUND_MS="600000")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["is_error"] is False
    outcome = fanout.outcome()
    assert outcome.errors == []
    assert outcome.completed == {i: 1 for i in range(50)}  # 50 completed tool_results, 0 lost, 0 twice


def test_a_hundred_background_children_notify_the_main_agent_exactly_once_each(served, tmp_path):
    fanout = Fanout(100, background=True, delay_s=1.0)
    done, _ = _run(served, fanout, tmp_path, 480)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["is_error"] is False
    outcome = fanout.outcome()
    assert len(outcome.notices) == 100
    assert all(statuses == ["completed"] for statuses in outcome.notices.values())
    assert outcome.completed == {i: 1 for i in range(100)}
    assert outcome.errors == []
