"""The client's questions about the service's process, asked of processes this test starts:
alive or not (a zombie is not), and whether the pid in ``service.json`` is a covey service."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from typing import Iterator

import pytest

from covey.client import process as lifecycle
from covey.client.paths import service_paths

ZOMBIE_PARENT = ("import os, sys, time\n"
                 "child = os.fork()\n"
                 "if child == 0:\n    os._exit(0)\n"
                 "print(child, flush=True)\n"
                 "time.sleep(60)\n")
"""A parent that never reaps its child: the child stays a zombie, and is not this test's child."""


@contextlib.contextmanager
def started(*command: str) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_running_process_is_alive_and_one_that_ended_is_not():
    with started("sleep", "60") as sleeper:
        assert lifecycle.pid_alive(sleeper.pid)
    assert not lifecycle.pid_alive(sleeper.pid)


def test_a_child_that_exited_is_reaped_and_not_alive():
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while lifecycle.pid_alive(child.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not lifecycle.pid_alive(child.pid)


def test_a_zombie_of_another_parent_is_not_alive():
    with started(sys.executable, "-c", ZOMBIE_PARENT) as parent:
        assert parent.stdout is not None
        zombie = int(parent.stdout.readline())
        deadline = time.monotonic() + 10
        while lifecycle.pid_alive(zombie) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not lifecycle.pid_alive(zombie)
        assert lifecycle.pid_alive(parent.pid)


@pytest.mark.parametrize("named", [True, False], ids=["covey-service", "another-program"])
def test_the_pid_in_service_json_counts_only_when_it_runs_covey_service(service_root, named):
    paths = service_paths()
    command = [sys.executable, "-c", "import time; time.sleep(60)", *(["covey.service"] if named else [])]
    with started(*command) as process:
        paths.info.write_text(json.dumps({"pid": process.pid}))
        assert lifecycle._unanswering_service_pid(paths) == (process.pid if named else None)
    assert lifecycle._unanswering_service_pid(paths) is None  # ended: no service


def test_no_service_json_or_no_pid_in_it_is_no_service(service_root):
    paths = service_paths()
    assert lifecycle._unanswering_service_pid(paths) is None
    paths.info.write_text(json.dumps({"pid": "12"}))
    assert lifecycle._unanswering_service_pid(paths) is None
