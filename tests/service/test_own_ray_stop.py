"""Stopping the service's own Ray ends every process of its process session at once, quickly,
even one that ignores SIGTERM, and nothing outside that session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from covey.ray import own_ray

# The leader ignores SIGTERM (as `ray start --block` takes its time to drain); it starts two
# children in its session, one in a process group of its own (as Ray's workers are).
LEADER = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
a = subprocess.Popen(sleeper)
b = subprocess.Popen(sleeper, process_group=0)
print(a.pid, b.pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_stop_ends_the_whole_session_within_the_grace():
    leader = subprocess.Popen([sys.executable, "-c", LEADER], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    outsider = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        children = [int(pid) for pid in leader.stdout.readline().split()]
        own = own_ray.OwnRay(leader.pid, own_ray.local_rays.started_at(leader.pid), "127.0.0.1:1")
        began = time.monotonic()
        assert own_ray.stop(own)
        assert time.monotonic() - began < 2 * own_ray.STOP_GRACE_S + 1
        leader.wait(timeout=5)
        assert not any(_alive(pid) for pid in children)
        assert outsider.poll() is None, "a process outside the Ray's session was stopped"
    finally:
        for process in (leader, outsider):
            process.kill()
            process.wait()
        for pid in locals().get("children", []):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_the_own_ray_is_alive_while_its_process_runs_and_not_under_a_reused_pid():
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        own = own_ray.OwnRay(sleeper.pid, own_ray.local_rays.started_at(sleeper.pid), "127.0.0.1:1")
        assert own.alive()
        assert not own_ray.OwnRay(sleeper.pid, "another start", own.address).alive()  # the pid, reused
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not own.alive()
