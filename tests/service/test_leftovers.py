"""What a covey service that died left running is found by its mark and killed, by pid."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from covey.service import leftovers
from covey.service.runs import _run_env


def _sleeper(**env: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env={**os.environ, **env})


def test_the_processes_a_dead_service_marked_are_killed_and_no_other():
    dead, other = leftovers.new_instance(), leftovers.new_instance()
    left = _sleeper(**{leftovers.INSTANCE_VAR: dead})
    alive = _sleeper(**{leftovers.INSTANCE_VAR: other})
    unmarked = _sleeper()
    try:
        deadline = time.monotonic() + 5
        while left.pid not in leftovers.marked(dead) and time.monotonic() < deadline:
            time.sleep(0.05)  # the child's environment is readable once it has exec'd
        assert leftovers.reap(dead) == [left.pid]
        assert left.wait(5) == -9
        assert alive.poll() is None and unmarked.poll() is None
        assert leftovers.reap(None) == []
    finally:
        for proc in (left, alive, unmarked):
            proc.kill()
            proc.wait()


def test_a_served_runs_environment_carries_the_services_mark(monkeypatch):
    monkeypatch.setenv(leftovers.INSTANCE_VAR, "this-service")
    env = _run_env({"PATH": "/usr/bin", "FOO": "bar"})
    assert env == {"PATH": "/usr/bin", "FOO": "bar", leftovers.INSTANCE_VAR: "this-service"}
    monkeypatch.delenv(leftovers.INSTANCE_VAR)
    assert _run_env({"FOO": "bar"}) == {"FOO": "bar"}
