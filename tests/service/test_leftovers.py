"""What a covey service that died left running is found by its mark and killed, by pid."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from covey.client import leftovers
from covey.service.session_options import _run_env


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


def test_processes_that_name_the_dead_services_ray_session_are_found_too(tmp_path):
    """Ray starts its dashboard and runtime-env agents without the service's mark; their
    command line names the Ray's session directory."""
    session_dir = str(tmp_path / "session_2026-12-01_dead")
    named = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(60)", f"--session-dir={session_dir}"])
    other = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(60)", f"--session-dir={session_dir}x"])
    try:
        deadline = time.monotonic() + 5
        while named.pid not in leftovers.marked("unused", session_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert named.pid in leftovers.reap("some-instance", session_dir)
        assert named.wait(5) == -9
        assert other.poll() is None  # another Ray's session directory only shares a prefix
    finally:
        for proc in (named, other):
            proc.kill()
            proc.wait()


def test_a_retitled_process_holding_a_log_file_of_the_dead_ray_is_found(tmp_path):
    """Ray retitles its agents (``ray::DashboardAgent``): their command line no longer names
    the session, but their log files under it stay open."""
    session_dir = tmp_path / "session_2026-12-01_dead"
    (session_dir / "logs").mkdir(parents=True)
    log = session_dir / "logs" / "agent.log"
    holder = subprocess.Popen([sys.executable, "-c", f"f = open({str(log)!r}, 'w'); import time; time.sleep(60)"])
    try:
        deadline = time.monotonic() + 5
        while holder.pid not in leftovers.marked("unused", str(session_dir)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert holder.pid in leftovers.marked("unused", str(session_dir))
        assert holder.pid not in leftovers.marked("unused", str(tmp_path / "another_session"))
    finally:
        holder.kill()
        holder.wait()
