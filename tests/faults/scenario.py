"""What the fault and load suite runs: a fan-out scenario served by the fake Messages API,
the real ``covey`` command, a CPU burner, and the processes a run leaves behind.

The main agent's prompt carries ``MAIN_MARK``; it answers its first request with
``n`` Agent calls whose prompts are ``CHILD-<i>``, and every later request with
text. A child waits ``delay_s`` per turn, calls ``Glob`` for ``turns - 1`` turns,
then answers ``RESULT-<i>``. Counting what came back reads the main agent's last
request: tool results (sync children) and task notifications (background ones).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

MAIN_MARK = "FANOUT-MAIN"
COVEY = [sys.executable, "-m", "covey"]


class Fanout:
    """The fake API's reply function for one fan-out run."""

    def __init__(self, n: int, *, background: bool, delay_s: float = 1.0, turns: int = 1,
                 write: set[int] | None = None, isolation: str | None = None, hold_turn: int | None = None) -> None:
        self.n, self.background, self.delay_s, self.turns = n, background, delay_s, turns
        self.isolation = isolation
        self.hold_turn = hold_turn
        """A child's request of this turn (1 = its first) waits until ``gate`` is set:
        every child is then known to be running, mid-run."""
        self.gate = threading.Event()
        self.write = write or set()
        """Children whose first turn writes a file (so a worktree they run in has changes)."""
        self.released = threading.Event()
        """Set at the end of a test: sleeping and held replies return at once."""
        self.main_requests: list[dict[str, Any]] = []
        self.child_requests: dict[int, int] = {}
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(body["messages"])
        if MAIN_MARK in text:
            with self._lock:
                self.main_requests.append(body)
            if len(self.main_requests) == 1:
                return {"content": [self._agent_call(i) for i in range(self.n)]}
            return {"text": "noted"}
        child = int(re.search(r"CHILD-(\d+)", text).group(1))
        with self._lock:
            self.child_requests[child] = self.child_requests.get(child, 0) + 1
        done_turns = text.count('"tool_result"')
        if self.hold_turn is not None and done_turns + 1 == self.hold_turn:
            while not (self.gate.is_set() or self.released.is_set()):
                self.gate.wait(0.1)
        self.released.wait(self.delay_s)
        if done_turns + 1 >= self.turns:
            return {"text": f"RESULT-{child}"}
        if done_turns == 0 and child in self.write:
            tool = {"name": "Write", "input": {"file_path": f"made-by-{child}.txt", "content": "work\n"}}
        else:
            tool = {"name": "Glob", "input": {"pattern": f"*.nothing-{done_turns}"}}
        return {"content": [{"type": "tool_use", "id": f"toolu_c{child}_{done_turns}", **tool}]}

    def _agent_call(self, i: int) -> dict[str, Any]:
        payload = {"description": f"child {i}", "prompt": f"CHILD-{i}: do your part",
                   "subagent_type": "general-purpose"}
        if self.background:
            payload["run_in_background"] = True
        if self.isolation:
            payload["isolation"] = self.isolation
        return {"type": "tool_use", "id": f"toolu_main_{i}", "name": "Agent", "input": payload}

    def children_seen(self, turns: int = 1) -> int:
        """How many children have made at least ``turns`` requests."""
        with self._lock:
            return sum(1 for count in self.child_requests.values() if count >= turns)

    def outcome(self) -> "Outcome":
        """What reached the main agent, read from its last request."""
        return Outcome.of(self.main_requests[-1]["messages"] if self.main_requests else [], self.n)


class Outcome:
    """Per child: how its result came back to the main agent, and how often."""

    def __init__(self) -> None:
        self.completed: dict[int, int] = {}
        """Completed results per child (a sync tool_result, or a completed notification)."""
        self.errors: list[str] = []
        """Tool results that were errors (a sync child reported failed)."""
        self.notices: dict[str, list[str]] = {}
        """The statuses of the task notifications, per agent id."""

    @classmethod
    def of(cls, messages: list[dict[str, Any]], n: int) -> "Outcome":
        out = cls()
        for message in messages:
            if message["role"] != "user":
                continue
            blocks = message["content"] if isinstance(message["content"], list) else [
                {"type": "text", "text": message["content"]}]
            for block in blocks:
                out._read(block)
        return out

    def _read(self, block: dict[str, Any]) -> None:
        text = _text_of(block)
        for notice in re.findall(r"<task-notification>(.*?)</task-notification>", text, re.S):
            agent = re.search(r"<task-id>(.*?)</task-id>", notice).group(1)
            status = re.search(r"<status>(.*?)</status>", notice).group(1)
            self.notices.setdefault(agent, []).append(status)
            if status == "completed" and (found := re.search(r"RESULT-(\d+)", notice)):
                self._completed(int(found.group(1)))
        if block.get("type") != "tool_result" or "<task-notification>" in text:
            return
        if block.get("is_error"):
            self.errors.append(text[:300])
        elif found := re.search(r"RESULT-(\d+)", text):
            self._completed(int(found.group(1)))

    def _completed(self, child: int) -> None:
        self.completed[child] = self.completed.get(child, 0) + 1


def _text_of(block: dict[str, Any]) -> str:
    if block.get("type") == "text":
        return block.get("text", "")
    content = block.get("content", "")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


@contextmanager
def cpu_burner() -> Iterator[int]:
    """One process spinning on a core for the length of the block (stopped by its pid)."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def covey_env(tmp_path: Path, api_url: str, **extra: str) -> dict[str, str]:
    """The environment of a ``covey`` run with a Ray temp dir of its own (which is how
    the processes it starts are found afterwards, by ``/proc/PID/environ``)."""
    # Short: Ray's socket paths under it must stay within the kernel's 107 bytes.
    ray_tmp = tempfile.mkdtemp(prefix="cf-", dir="/tmp")
    return {**os.environ, "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "x",
            "RAY_TMPDIR": str(ray_tmp), **extra}


def start_covey(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([*COVEY, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose environment holds ``marker`` (a run's own RAY_TMPDIR)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found


def titled(pids: list[int], prefix: str) -> list[int]:
    """Those of ``pids`` whose process title (Ray retitles its workers) starts with ``prefix``."""
    out = []
    for pid in pids:
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if title.startswith(prefix):
            out.append(pid)
    return out


def git_repo(path: Path) -> Path:
    """A repository with one commit, for children in worktrees."""
    (path / "README.md").write_text("a project\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=path, check=True)
    return path


def worktrees(repo: Path) -> list[str]:
    listing = subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=repo, capture_output=True, text=True)
    return [line.split(" ", 1)[1] for line in listing.stdout.splitlines() if line.startswith("worktree ")][1:]


def wait_for(condition: Any, timeout_s: float, what: str, proc: subprocess.Popen | None = None) -> None:
    """Wait for ``condition``; with ``proc``, a run that ends first fails at once with what it printed."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the run ended ({proc.returncode}) before {what}:\n{out[-2000:]}\n{err[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.1)


def wait_gone(marker: str, timeout_s: float = 20.0) -> list[int]:
    """Wait until no process of the run is left; the ones still there after the timeout
    are killed (this test started them) and returned, so the test can fail on them."""
    deadline = time.monotonic() + timeout_s
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left
