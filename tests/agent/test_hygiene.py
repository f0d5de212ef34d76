"""What an agent actor's process holds, as ``Baseline`` counts it: open files and pipes (not
sockets), and child processes, on processes and files this test opens and starts."""

from __future__ import annotations

import os
import socket
import subprocess

from covey.agent import hygiene


def test_files_and_pipes_count_and_sockets_do_not(tmp_path):
    before = hygiene.open_fds()
    with open(tmp_path / "f", "w"):
        assert hygiene.open_fds() == before + 1
    reading, writing = os.pipe()
    try:
        assert hygiene.open_fds() == before + 2
    finally:
        os.close(reading)
        os.close(writing)
    one, other = socket.socketpair()
    with socket.socket(), one, other:  # an unbound one too: Ray's are not all connected yet
        assert hygiene.open_fds() == before


def test_a_child_started_after_the_baseline_is_new_until_it_is_reaped():
    baseline = hygiene.child_processes()
    child = subprocess.Popen(["sleep", "60"])
    try:
        assert child.pid in hygiene.child_processes()
        assert hygiene.new_children(baseline) == {child.pid}
    finally:
        child.kill()
        child.wait()
    assert hygiene.new_children(baseline) == set()
