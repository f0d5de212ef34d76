"""Whether an agent actor's process is as clean as it was before a run: no task, file or
child process left behind. The runner asks before the pool hands the actor to another
agent (``AgentRunner.reset``); an actor that is not clean is killed, not reused."""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import dataclass, field
from typing import Any

import psutil

FD_SLACK = 2
"""Open files a clean process may hold beyond its baseline (caches Python opens lazily)."""


@dataclass
class Baseline:
    """What the process held before its first run: its open files and child processes."""

    fds: int = field(default_factory=lambda: open_fds())
    children: set[int] = field(default_factory=lambda: child_processes())

    def clean(self) -> bool:
        """No task but those serving calls, no extra open file, no new child process."""
        leftovers = [task for task in asyncio.all_tasks() if not is_serving(task)]
        return not leftovers and open_fds() <= self.fds + FD_SLACK and not new_children(self.children)


def open_fds() -> int:
    """Open files and pipes of this process. Sockets are left out: Ray opens one per
    actor this one has called (the registry, the mailbox, a parent) and keeps them for reuse.
    ``/dev/fd`` lists them on Linux and macOS alike; psutil counts descriptors but cannot tell
    a socket (its ``net_connections`` misses unbound ones, and reads every socket table)."""
    try:
        names = os.listdir("/dev/fd")
    except OSError:
        return 0
    count = 0
    for name in names:
        try:
            count += not stat.S_ISSOCK(os.fstat(int(name)).st_mode)
        except OSError:  # closed while we looked (the listing's own fd, a racing close)
            continue
    return count


def new_children(baseline: set[int]) -> set[int]:
    """Child processes beyond ``baseline``. A process with no child at all knows it from
    one syscall; listing children with psutil reads every process's stat file (py-spy:
    half of a short child's CPU went there, more with many agents on the machine)."""
    if not baseline:
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)  # WNOWAIT: reaps nothing
        except ChildProcessError:
            return set()
    return child_processes() - baseline


def child_processes() -> set[int]:
    try:
        return {child.pid for child in psutil.Process().children()}
    except psutil.Error:  # the process table unreadable: nothing known, nothing claimed
        return set()


def is_serving(task: asyncio.Task[Any]) -> bool:
    """Tasks that are not an agent's leftovers: Ray's own, and calls being served right now."""
    if task is asyncio.current_task() or task.done():
        return True
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", "")
    code = getattr(coro, "cr_code", None) or getattr(coro, "ag_code", None)
    filename = getattr(code, "co_filename", "")
    return name.startswith("_AgentActor.") or "/ray/" in filename
