"""Starting the service: two starters end up with one, a dead one is replaced, stop waits
until it is gone. A stand-in service process (tests/service/fake_service.py) plays the
service with the real lock logic, so no Ray starts."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from covey.cli import service_commands as commands
from covey.client import failed_start
from covey.client import process as lifecycle
from covey.client.paths import service_paths

REPO = Path(__file__).resolve().parents[2]
FAKE = [sys.executable, "-m", "tests.service.fake_service"]


@pytest.fixture
def fake_spawns(service_root, monkeypatch):
    """``lifecycle.spawn`` starts the stand-in; every process it started is killed at the end."""
    started: list[subprocess.Popen] = []

    def spawn(paths, *, address=None, idle_timeout_s=None, dashboard=False):
        started.append(subprocess.Popen(FAKE, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        return started[-1]

    monkeypatch.setattr(lifecycle, "spawn", spawn)
    yield started
    for proc in started:
        proc.kill()
        proc.wait()


def test_two_clients_that_start_at_once_end_up_with_one_service(fake_spawns):
    paths = service_paths()
    answers = []
    starters = [threading.Thread(target=lambda: answers.append(lifecycle.ensure_service(paths))) for _ in range(2)]
    for thread in starters:
        thread.start()
    for thread in starters:
        thread.join(30)
    assert len(fake_spawns) == 1
    assert sorted(started for _, started in answers) == [False, True]
    assert answers[0][0]["pid"] == answers[1][0]["pid"] == fake_spawns[0].pid


def test_a_dead_service_and_its_stale_socket_are_replaced(fake_spawns):
    paths = service_paths()
    first, _ = lifecycle.ensure_service(paths)
    os.kill(first["pid"], signal.SIGKILL)
    fake_spawns[0].wait()
    assert paths.socket.exists() and lifecycle.ping(paths) is None  # stale: nothing listens
    second, started = lifecycle.ensure_service(paths)
    assert started and second["pid"] != first["pid"] and second["pid"] == fake_spawns[1].pid


def test_a_second_service_process_sees_the_first_and_leaves(fake_spawns):
    paths = service_paths()
    first, _ = lifecycle.ensure_service(paths)
    second = subprocess.run(FAKE, cwd=REPO, capture_output=True, text=True, timeout=30)
    assert second.returncode == 0 and "another one runs" in second.stdout
    assert lifecycle.ping(paths)["pid"] == first["pid"]


def test_stop_waits_until_the_service_is_gone_and_nothing_running_is_no_error(fake_spawns, capsys):
    paths = service_paths()
    first, _ = lifecycle.ensure_service(paths)
    assert lifecycle.stop(paths) == first["pid"]
    assert not lifecycle.pid_alive(first["pid"])
    assert commands.stop_command() == 0
    assert capsys.readouterr().out.strip() == "covey: no covey service is running"


def test_a_service_that_fails_to_start_is_reported_with_its_log(service_root, monkeypatch):
    def spawn(paths, *, address=None, idle_timeout_s=None, dashboard=False):
        paths.log.write_text("Traceback (most recent call last):\nRuntimeError: no Ray for you\n")
        return subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])

    monkeypatch.setattr(lifecycle, "spawn", spawn)
    with pytest.raises(lifecycle.ServiceUnavailable) as raised:
        lifecycle.ensure_service(service_paths())
    message = str(raised.value)
    assert "\n" not in message and "Traceback" not in message
    assert "could not start (exit status 3): RuntimeError: no Ray for you (its log:" in message


def test_a_failed_start_names_the_cause_not_covey_s_wrapper(service_root):
    paths = service_paths()
    paths.log.write_text("old run: KeyError: 'stale'\n")
    offset = paths.log.stat().st_size
    with open(paths.log, "a") as log:
        log.write("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
                  "ValueError: Ray Client requires pip package `ray[client]`.\n"
                  "Traceback (most recent call last):\n"
                  f"covey.errors.CoveyError: `ray start` exited with 1 before its Ray answered; see {paths.log}\n")
    line = failed_start.start_failure(paths, offset)
    assert line.startswith("ValueError: Ray Client requires pip package")
    assert "stale" not in line and line.endswith(f"(its log: {paths.log})")


def test_a_log_turned_over_as_the_service_started_is_read_from_its_start(service_root):
    """The client noted the log's size before the start; the service turned the full log over."""
    paths = service_paths()
    paths.log.write_text("x" * 5_000 + "\n")
    offset = paths.log.stat().st_size
    paths.log.rename(paths.log.with_name("service.log.1"))
    paths.log.write_text("Traceback (most recent call last):\nRuntimeError: no Ray for you\n")
    assert failed_start.start_failure(paths, offset).startswith("RuntimeError: no Ray for you (its log:")


def test_a_start_that_would_fail_its_check_starts_nothing(service_root, monkeypatch):
    monkeypatch.setattr(lifecycle, "spawn", lambda *a, **k: pytest.fail("a service was started"))

    def refuse() -> None:
        raise lifecycle.ServiceUnavailable("no key")

    with pytest.raises(lifecycle.ServiceUnavailable, match="no key"):
        lifecycle.ensure_service(service_paths(), before_start=refuse)


def test_a_service_that_never_answers_times_out_with_a_clear_error_and_is_ended_with_what_it_started(
        service_root, tmp_path):
    paths = service_paths()
    child_pid = tmp_path / "child.pid"
    # A stand-in that starts a child in a session of its own (as the service starts its Ray) and hangs.
    code = ("import subprocess, sys, time, pathlib; "
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True); "
            f"pathlib.Path({str(child_pid)!r}).write_text(str(c.pid)); time.sleep(60)")
    sleeper = subprocess.Popen([sys.executable, "-c", code])
    try:
        while not child_pid.exists():
            time.sleep(0.05)
        with pytest.raises(lifecycle.ServiceUnavailable, match="did not answer within 1 s and was stopped"):
            lifecycle.wait_ready(paths, sleeper, timeout_s=1.0)
        assert sleeper.poll() is not None
        child = int(child_pid.read_text())
        deadline = time.monotonic() + 5
        while lifecycle.pid_alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not lifecycle.pid_alive(child), "the service's child (its Ray) was left running"
    finally:
        sleeper.kill()
        sleeper.wait()
        if child_pid.exists():
            with contextlib.suppress(OSError):
                os.kill(int(child_pid.read_text()), signal.SIGKILL)


def test_status_text_shows_the_pool_a_line_per_lane():
    from covey.cli.service_commands import status_text

    lane = {"ready": 2, "lent": 1, "starting": 0, "target": 3, "floor": 2, "demand": 3.0, "high_water": 3,
            "loans": 9}
    kit = {"ready": 1, "lent": 0, "starting": 0, "target": 1, "floor": 1, "demand": 1.0, "high_water": 1,
           "loans": 4}
    status = {"pid": 42, "uptime_s": 75, "version": "0.1.0", "ray_address": "127.0.0.1:6379", "started_ray": True,
              "sessions": [], "idle_s": 5, "idle_timeout_s": 600, "socket": "/s", "log": "/l",
              "pool": {"home": lane, "kit": kit, "created": 7}}
    text = status_text(status)
    assert "pool      agents: 2 ready, 1 lent, 0 starting; keeps 3 (floor 2, demand 3), high-water 3, lent 9 times" in text
    assert "pool      session kits: 1 ready, 0 lent" in text and "7 created since the service started" in text


def test_status_text_lists_the_running_sessions_in_aligned_columns():
    from covey.cli.service_commands import status_text

    sessions = [{"session_id": "0b9c9a40-1", "cwd": "/p", "client_pid": 7, "running_s": 5},
                {"session_id": "1f2e3d4c-22", "cwd": "/a/longer/project", "client_pid": 1234, "running_s": 125}]
    status = {"pid": 42, "uptime_s": 75, "version": "0.1.0", "ray_address": "127.0.0.1:6379", "started_ray": True,
              "sessions": sessions, "idle_s": 5, "idle_timeout_s": 600, "socket": "/s", "log": "/l"}
    lines = status_text(status).splitlines()
    at = lines.index("  sessions  2 running")
    assert lines[at + 1:at + 3] == ["    0b9c9a40-1   /p                 client pid 7     5 s",
                                    "    1f2e3d4c-22  /a/longer/project  client pid 1234  2 min 5 s"]


def test_two_service_directories_name_two_shared_pools():
    from covey.pool.shared_pool import pool_name

    assert pool_name("/home/a/.covey/service") != pool_name("/tmp/other-service")
    assert pool_name("/home/a/.covey/service") == pool_name("/home/a/.covey/service")
