"""The process groups one agent started, so its cleanup can kill exactly those.

Every shell covey runs is its own session (``start_new_session=True``), so its
pid is also the id of a process group holding everything it spawned, including
``cmd &`` grandchildren that outlive the shell. Killing the group, not the pid,
is what leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

from covey.teams.messages import TaskNotice

KILL_GRACE_S = 1.0
"""How long a group gets to exit after SIGTERM before it is sent SIGKILL."""


@dataclass
class BackgroundShell:
    """A shell started with ``run_in_background``: where its output goes, and how it ended."""

    shell_id: str
    command: str
    output_path: Path
    process: asyncio.subprocess.Process
    description: str = ""
    tool_use_id: str | None = None
    status: str = "running"
    """``running``, then ``completed`` (exit 0), ``failed`` or ``killed`` (TaskStop, the agent's end)."""
    exit_code: int | None = None
    watcher: asyncio.Future[None] | None = None

    @property
    def label(self) -> str:
        return self.description or self.command


@dataclass
class ProcessTracker:
    """Remembers the process groups an agent started; ``kill_all`` ends them."""

    _groups: dict[int, asyncio.subprocess.Process] = field(default_factory=dict)
    background: dict[str, BackgroundShell] = field(default_factory=dict)
    notices: list[TaskNotice] = field(default_factory=list)
    """Notices of background shells that ended on their own, not yet read (the loop renders them)."""

    def track(self, process: asyncio.subprocess.Process) -> None:
        """Remember a process started in its own session (its pid is its group id)."""
        self._prune()
        self._groups[process.pid] = process

    def live_groups(self) -> list[int]:
        """Group ids that still have at least one member."""
        self._prune()
        return list(self._groups)

    async def kill(self, pgid: int, grace_s: float = KILL_GRACE_S) -> None:
        """SIGTERM the group, give its leader ``grace_s`` to exit, then SIGKILL the rest."""
        process = self._groups.pop(pgid, None)
        if process is None:
            return  # never ours, or already killed: touch nothing
        if not _signal_group(pgid, signal.SIGTERM):
            return
        try:
            await asyncio.wait_for(process.wait(), grace_s)
        except asyncio.TimeoutError:
            pass
        # Grandchildren may ignore SIGTERM or outlive the leader; SIGKILL whatever remains.
        _signal_group(pgid, signal.SIGKILL)
        await process.wait()

    def start_background(self, shell: BackgroundShell) -> None:
        """Remember a background shell and watch for its end (which notifies the agent)."""
        self.background[shell.shell_id] = shell
        shell.watcher = asyncio.ensure_future(self._watch(shell))

    async def _watch(self, shell: BackgroundShell) -> None:
        code = await shell.process.wait()
        if shell.status == "running":
            shell.status, shell.exit_code = ("completed" if code == 0 else "failed"), code
            self.notices.append(shell_notice(shell))

    async def stop(self, shell: BackgroundShell) -> None:
        """Kill a background shell (TaskStop): it ends ``killed``, without a notification."""
        if shell.status == "running":
            shell.status = "killed"
        await self.kill(shell.process.pid)

    def take_notices(self) -> list[TaskNotice]:
        taken, self.notices = self.notices, []
        return taken

    async def kill_all(self, grace_s: float = KILL_GRACE_S) -> None:
        """Kill every live group this tracker started; calling it again is harmless."""
        for shell in self.background.values():
            shell.status = "killed" if shell.status == "running" else shell.status
            if shell.watcher is not None:
                shell.watcher.cancel()
        self.background.clear()
        self.notices.clear()
        await asyncio.gather(*(self.kill(pgid, grace_s) for pgid in list(self._groups)))

    def _prune(self) -> None:
        # Forget groups with no members left: once a group is empty its id can be
        # reused by an unrelated process, which we must never signal.
        for pgid in [g for g in self._groups if not _group_exists(g)]:
            del self._groups[pgid]


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


def shell_notice(shell: BackgroundShell) -> TaskNotice:
    """The notice of a background shell that ended on its own, as Claude Code words it."""
    how = "completed" if shell.status == "completed" else "failed"
    return TaskNotice(
        task_id=shell.shell_id, status=shell.status, task_type="local_bash", tool_use_id=shell.tool_use_id,
        output_file=str(shell.output_path), summary=f'Background command "{shell.label}" {how} (exit code {shell.exit_code})',
    )
