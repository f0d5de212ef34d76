"""What a covey service that died without stopping left running, and its removal.

Ray's fate sharing ends the GCS and raylet of a driver that was SIGKILLed, but not Ray's
dashboard and runtime-env agents, nor a shell command an agent was running. So every
service marks the processes it starts: it puts ``COVEY_SERVICE_INSTANCE=<id>`` in its own
environment before Ray starts (Ray's processes inherit it) and in every served run's
environment (so each agent's ``Bash`` commands carry it), and writes the id to
``service.json``. The next service, holding ``service.lock`` (so the previous one is
certainly dead), kills the processes that carry the dead one's id, by pid, before it
starts its own Ray. Linux only (``/proc``); elsewhere nothing is found.
"""

from __future__ import annotations

import logging
import os
import signal
import uuid
from pathlib import Path

log = logging.getLogger(__name__)

INSTANCE_VAR = "COVEY_SERVICE_INSTANCE"


def new_instance() -> str:
    return uuid.uuid4().hex


def marked(instance: str, proc: Path = Path("/proc")) -> list[int]:
    """Pids of live processes whose environment carries this service instance's mark."""
    mark = f"{INSTANCE_VAR}={instance}".encode()
    found = []
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if mark in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def reap(instance: str | None) -> list[int]:
    """Kill (SIGKILL) what the dead service ``instance`` left running; the pids killed."""
    if not instance:
        return []
    killed = []
    for pid in marked(instance):
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except OSError:
            pass
    if killed:
        log.info("killed %d processes a covey service that died left running: %s", len(killed), killed)
    return killed
