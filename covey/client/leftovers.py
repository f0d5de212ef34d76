"""What a covey service that died without stopping left running, and its removal.

Ray's fate sharing ends the GCS and raylet of a driver that was SIGKILLed, but not Ray's
dashboard and runtime-env agents, nor a shell command an agent was running. So every
service marks the processes it starts: it puts ``COVEY_SERVICE_INSTANCE=<id>`` in its own
environment before Ray starts (Ray's processes inherit it) and in every served run's
environment (so each agent's ``Bash`` commands carry it), and writes the id to
``service.json``. The next service, holding ``service.lock`` (so the previous one is
certainly dead), kills the processes that carry the dead one's id, by pid, before it
starts its own Ray. psutil reads the processes' environments, command lines and open files,
on Linux and macOS alike.
"""

from __future__ import annotations

import logging
import os
import signal
import time
import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

log = logging.getLogger(__name__)

INSTANCE_VAR = "COVEY_SERVICE_INSTANCE"


def new_instance() -> str:
    return uuid.uuid4().hex


def marked(instance: str, session_dir: str | None = None) -> list[int]:
    """Pids of live processes whose environment carries this service instance's mark, or
    whose command line names its Ray's session directory (Ray starts its dashboard and
    runtime-env agents with an environment of its own, without the mark)."""
    import psutil  # only here: the thin client imports this module for INSTANCE_VAR

    found = []
    # Each process asked directly: process_iter(attrs=...) reads more of each (its oneshot), 2x slower.
    for process in psutil.process_iter():
        if process.pid == os.getpid():
            continue
        try:
            if process.environ().get(INSTANCE_VAR) == instance or (session_dir and _of_session(process, session_dir)):
                found.append(process.pid)
        except psutil.Error:  # gone, or not ours to read
            continue
    return found


def _of_session(process: psutil.Process, session_dir: str) -> bool:
    """Whether the process names the Ray session directory in an argument, or holds a file
    open under it (Ray retitles its processes, but each keeps its log files open there)."""
    if any(argument.endswith(session_dir) or session_dir + "/" in argument for argument in process.cmdline()):
        return True
    import psutil

    try:
        return any(file.path.startswith(session_dir + "/") for file in process.open_files())
    except psutil.Error:
        return False


def reap(instance: str | None, session_dir: str | None = None, rounds: int = 20, pause_s: float = 0.1) -> list[int]:
    """Kill (SIGKILL) what the dead service ``instance`` left running; the pids killed.

    Scans again until a scan finds nothing (up to ``rounds``): a process of the dead
    service's that is itself being ended (its raylet, by Ray's fate sharing) may start a
    worker between two scans."""
    if not instance:
        return []
    killed: list[int] = []
    for _ in range(rounds):
        found = [pid for pid in marked(instance, session_dir) if pid not in killed]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                pass
        time.sleep(pause_s)
    if killed:
        log.info("killed %d processes a covey service that died left running: %s", len(killed), killed)
    return killed
