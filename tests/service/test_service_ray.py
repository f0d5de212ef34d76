"""The real covey service, end to end: ``covey -p`` starts it, the next run reuses it,
``covey status`` shows it, ``covey stop`` leaves nothing; a killed client's agents are
stopped; a killed service is reported and replaced; two clients at once get one service.

Each test has its own service directory, HOME and RAY_TMPDIR (one temporary folder, whose
path every process of the test carries in its environment), and the fixture stops the
service and kills anything left with that path, even when the test fails.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Iterator

import psutil
import pytest

from tests.faults.scenario import processes_with, wait_for, wait_gone
from tests.service.conftest import client_env

pytestmark = pytest.mark.ray  # each test's service starts a Ray of its own

COVEY = [sys.executable, "-m", "covey"]
SAY_OK = "rules:\n  - reply: {text: ok}\n"


class Served:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "svc"
        for name in ("home", "ray", "project"):
            (base / name).mkdir()
        self.project = base / "project"
        self.env = client_env(self.root, HOME=str(base / "home"), RAY_TMPDIR=str(base / "ray"))
        self.leftovers_expected = False
        """A SIGKILLed service leaves Ray's dashboard and runtime-env agents (and a running
        Bash command's processes) behind: Ray's fate sharing ends only the GCS and raylet."""

    def rules(self, text: str) -> str:
        path = self.base / f"rules-{uuid.uuid4().hex[:6]}.yaml"
        path.write_text(text)
        return f"scripted:{path}"

    def covey(self, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*COVEY, *args], cwd=self.project, env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def start(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([*COVEY, *args], cwd=self.project, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def pid(self) -> int:
        return json.loads((self.root / "service.json").read_text())["pid"]

    def status(self) -> dict:
        done = self.covey("status", "--json", timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def log(self) -> str:
        return (self.root / "service.log").read_text()


@pytest.fixture
def served() -> Iterator[Served]:
    base = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp"))  # short: socket paths have a length limit
    served = Served(base)
    try:
        yield served
    finally:
        subprocess.run([*COVEY, "stop"], env=served.env, capture_output=True, timeout=90)
        left = wait_gone(str(base), timeout_s=20)
        shutil.rmtree(base, ignore_errors=True)
    assert left == [] or served.leftovers_expected, f"processes of the test were left running: {left}"


def _family(pid: int) -> list[int]:
    return [pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _sleeping_bash(served: Served, mark: str) -> str:
    """Rules whose main agent runs a long Bash command carrying ``mark``."""
    return served.rules(
        "rules:\n  - reply:\n      tool_use: {name: Bash, input: {command: \"sleep 300; echo %s\"}}\n" % mark)


def _with_mark(mark: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if mark in " ".join(proc.info["cmdline"] or []):
            found.append(proc.pid)
    return found


def test_a_run_starts_the_service_the_next_reuses_it_and_stop_leaves_nothing(served):
    first = served.covey("-p", "say ok", "--model", served.rules(SAY_OK), "--quiet")
    assert (first.returncode, first.stdout) == (0, "ok\n"), first.stderr
    pid = served.pid()
    assert stat.S_IMODE(os.stat(served.root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(served.root / "service.sock").st_mode) == 0o600
    second = served.covey("-p", "say ok", "--model", served.rules(SAY_OK), "--output-format", "json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["result"] == "ok" and served.pid() == pid
    assert served.log().count("serving on") == 1

    status = served.status()
    assert status["pid"] == pid and status["sessions"] == [] and status["started_ray"] is True
    assert status["ray_address"].startswith("127.0.0.1:") and status["processes"]["count"] >= 3
    text = served.covey("status")
    assert text.returncode == 0 and f"pid {pid}" in text.stdout and "sessions  0 running" in text.stdout

    family = _family(pid)
    stopped = served.covey("stop")
    assert stopped.returncode == 0 and stopped.stdout.strip() == f"covey: stopped the covey service (pid {pid})"
    assert [p for p in family if _alive(p)] == []
    assert wait_gone(str(served.base), timeout_s=20) == []
    assert not (served.root / "service.sock").exists() and not (served.root / "service.json").exists()
    assert served.covey("status").returncode == 1


def test_a_killed_client_leaves_its_sessions_agents_stopped(served):
    mark = f"MARK-{uuid.uuid4().hex[:8]}"
    client = served.start("-p", "run it", "--model", _sleeping_bash(served, mark), "--allowed-tools", "Bash",
                          "--quiet")
    try:
        wait_for(lambda: _with_mark(mark), 90, "the agent's Bash command to run")
        assert len(served.status()["sessions"]) == 1
    finally:
        client.kill()
        client.wait()
    wait_for(lambda: not _with_mark(mark), 30, "the killed client's agent to be stopped")
    wait_for(lambda: served.status()["sessions"] == [], 30, "the session to end")
    assert _alive(served.pid())  # the service serves on
    again = served.covey("-p", "say ok", "--model", served.rules(SAY_OK), "--quiet")
    assert (again.returncode, again.stdout) == (0, "ok\n"), again.stderr


def test_a_killed_service_makes_its_client_exit_with_a_clear_error_and_the_next_run_starts_a_new_one(served):
    mark = f"MARK-{uuid.uuid4().hex[:8]}"
    client = served.start("-p", "run it", "--model", _sleeping_bash(served, mark), "--allowed-tools", "Bash",
                          "--quiet")
    try:
        wait_for(lambda: _with_mark(mark), 90, "the agent's Bash command to run")
        old = served.pid()
        served.leftovers_expected = True
        os.kill(old, signal.SIGKILL)
        _, err = client.communicate(timeout=30)
    finally:
        client.kill()
        client.wait()
    assert client.returncode == 1
    assert "covey: the covey service stopped during the run" in err and "next run starts a new one" in err
    again = served.covey("-p", "say ok", "--model", served.rules(SAY_OK), "--quiet")
    assert (again.returncode, again.stdout) == (0, "ok\n"), again.stderr
    assert served.pid() != old


def test_two_clients_at_once_get_their_answers_from_one_service(served):
    clients = [served.start("-p", f"say ok {i}", "--model", served.rules(SAY_OK), "--output-format", "json")
               for i in range(2)]
    outputs = [client.communicate(timeout=180) for client in clients]
    assert [client.returncode for client in clients] == [0, 0], [err for _, err in outputs]
    assert [json.loads(out)["result"] for out, _ in outputs] == ["ok", "ok"]
    assert served.log().count("serving on") == 1
