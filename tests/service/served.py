"""One real covey service for a test (or a module of tests), with a private base dir.

HOME, the service directory, RAY_TMPDIR and TMPDIR all sit under one short temporary folder
(Unix socket paths must stay under ~100 bytes), whose path every process the service
starts carries in its environment. ``served_service`` always stops it at the end
(``covey stop``, then it kills whatever is left carrying the base path in
``/proc/PID/environ``), even when the test failed, and fails the test on leftovers.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

from tests.faults.scenario import processes_with, wait_for, wait_gone
from tests.service.conftest import client_env

COVEY = [sys.executable, "-m", "covey"]
SAY_OK = "rules:\n  - reply: {text: ok}\n"


class Served:
    """The environment and files of one private covey service, and ways to talk to it."""

    def __init__(self, base: Path, **env: str) -> None:
        self.base = base
        self.root = base / "svc"
        for name in ("home", "ray", "project", "tmp"):
            (base / name).mkdir()
        self.project = base / "project"
        # Idle demand decays in seconds, not the service's minutes: a hundred actors a load test
        # left ready would otherwise hold their memory through the tests after it.
        defaults = {"COVEY_POOL_HALF_LIFE_S": "5"}
        self.env = client_env(self.root, HOME=str(base / "home"), RAY_TMPDIR=str(base / "ray"),
                              TMPDIR=str(base / "tmp"), **{**defaults, **env})
        self.leftovers_expected = False
        """A SIGKILLed service leaves Ray's dashboard and runtime-env agents (and a running
        Bash command's processes) behind: Ray's fate sharing ends only the GCS and raylet."""

    def rules(self, text: str) -> str:
        path = self.base / f"rules-{uuid.uuid4().hex[:6]}.yaml"
        path.write_text(text)
        return f"scripted:{path}"

    def covey(self, *args: str, timeout: int = 120, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([*COVEY, *args], cwd=cwd or self.project, env={**self.env, **(env or {})},
                              capture_output=True, text=True, timeout=timeout)

    def start(self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.Popen:
        return subprocess.Popen([*COVEY, *args], cwd=cwd or self.project, env={**self.env, **(env or {})},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def pid(self) -> int:
        return json.loads((self.root / "service.json").read_text())["pid"]

    def status(self) -> dict[str, Any]:
        done = self.covey("status", "--json", timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def log(self) -> str:
        return (self.root / "service.log").read_text()

    def wait_all_given_back(self, timeout_s: float = 30.0) -> dict[str, Any]:
        """The status once no session runs and the shared pool has nothing lent (a run gave
        every agent, and its session kit, back); fails with the last status otherwise."""
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.status()
            if status["sessions"] == [] and lent(status) == 0:
                return status
            if time.monotonic() > deadline:
                raise AssertionError(f"after {timeout_s} s the service still has sessions or lent actors: "
                                     f"sessions {status['sessions']}, pool {status.get('pool')}")
            time.sleep(0.3)


def lent(status: dict[str, Any]) -> int:
    """Agent actors and session kits the shared pool has lent, over every lane."""
    pool = status.get("pool")
    assert pool, f"the service shows no pool: {status}"
    return sum(lane.get("lent", 0) for lane in pool.values() if isinstance(lane, dict))


@contextlib.contextmanager
def served_service(start: bool = False, **env: str) -> Iterator[Served]:
    """A private base dir for one covey service (``start``: started now with ``covey start``,
    else by the first run); always stopped at the end, and nothing of it left running."""
    base = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp"))  # short: socket paths have a length limit
    served = Served(base, **env)
    try:
        if start:
            started = served.covey("start", timeout=120)
            assert started.returncode == 0, started.stdout + started.stderr
        yield served
    finally:
        subprocess.run([*COVEY, "stop"], env=served.env, capture_output=True, timeout=90)
        try:
            wait_for(lambda: not processes_with(str(base)), 20, "the service's processes to end")
        except AssertionError:
            pass
        seen = _described(processes_with(str(base)))  # what they were, before they are killed
        left = wait_gone(str(base), timeout_s=0)
        shutil.rmtree(base, ignore_errors=True)
    assert left == [] or served.leftovers_expected, f"processes of the test were left running: {seen}"


def _described(pids: list[int]) -> list[str]:
    out = []
    for pid in pids:
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(bytes(1), b" ").decode().strip()[:60]
            marks = [v for v in Path(f"/proc/{pid}/environ").read_bytes().split(bytes(1))
                     if v.startswith(b"COVEY_SERVICE_INSTANCE=")]
            parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
            out.append(f"{pid} {title} (parent {parent}, {marks[0].decode() if marks else 'no mark'})")
        except OSError:
            out.append(str(pid))
    return out
