"""The real covey service, end to end: ``covey -p`` starts it, the next run reuses it,
``covey status`` shows it, a Python ``covey.run(service=True)`` borrows from it, ``covey stop``
leaves nothing; a killed client's agents are
stopped; a killed service's sessions go on under the next one; two clients at once get one service.

A test of the service's start or stop has its own service directory, HOME and RAY_TMPDIR (one
temporary folder, whose path every process of the test carries in its environment), and the
fixture stops the service and kills anything left with that path, even when the test fails. A
test that only needs a service that serves on (a killed client) uses the session's one
(``shared_service``, tests/conftest.py), as a user's runs do.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import uuid
from typing import Iterator

import psutil
import pytest

from tests.faults.scenario import wait_for, wait_gone
from tests.service.served import SAY_OK, Served, served_service

pytestmark = pytest.mark.ray  # each test's service starts a Ray of its own


@pytest.fixture
def served() -> Iterator[Served]:
    with served_service() as served:
        yield served


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


ATTACH_SCRIPT = textwrap.dedent("""
    import json, sys
    import covey

    result = covey.run("say ok", model=sys.argv[1], cwd=sys.argv[2], service=True)
    print(json.dumps({"result": result.result, "is_error": result.is_error, "session_id": result.session_id}))
""")


def test_two_clients_start_one_service_the_next_run_reuses_it_and_stop_leaves_nothing(served):
    # Two clients at once find no service: they race to start it, and one service answers both.
    assert not (served.root / "service.json").exists()
    clients = [served.start("-p", f"say ok {i}", "--model", served.rules(SAY_OK), "--quiet") for i in range(2)]
    outputs = [client.communicate(timeout=180) for client in clients]
    assert [(client.returncode, out) for client, (out, _) in zip(clients, outputs)] == [(0, "ok\n")] * 2, \
        [err for _, err in outputs]
    assert served.log().count("serving on") == 1
    pid = served.pid()
    assert stat.S_IMODE(os.stat(served.root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(served.root / "service.sock").st_mode) == 0o600
    second = served.covey("-p", "say ok", "--model", served.rules(SAY_OK), "--output-format", "json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["result"] == "ok" and served.pid() == pid
    assert served.log().count("serving on") == 1

    # A Python program's covey.run(service=True) borrows from this service (it starts none).
    kit_loans = served.wait_all_given_back()["pool"]["kit"]["loans"]
    client_runs = served.log().count("run for client")
    script = served.base / "attach.py"
    script.write_text(ATTACH_SCRIPT)
    done = subprocess.run([sys.executable, str(script), served.rules(SAY_OK), str(served.project)],
                          cwd=served.project, env=served.env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert (out["result"], out["is_error"]) == ("ok", False), out
    after = served.wait_all_given_back()  # the script's exit leaves the service running, nothing lent
    assert after["pid"] == pid and served.pid() == pid and served.log().count("serving on") == 1
    assert after["pool"]["kit"]["loans"] == kit_loans + 1, after["pool"]  # it ran on the service's pool
    assert served.log().count("run for client") == client_runs  # not a CLI run: the Python process drove it

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


def test_a_killed_client_leaves_its_sessions_agents_stopped(shared_service):
    served = shared_service
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
    status = served.wait_all_given_back()  # no session left, and the pool lends nothing: its agents came back
    assert status["pid"] == served.pid() and _alive(served.pid())  # the service serves on
    again = served.covey("-p", "say ok", "--model", served.rules(SAY_OK), "--quiet")
    assert (again.returncode, again.stdout) == (0, "ok\n"), again.stderr


@pytest.mark.faults  # a fault: the service is SIGKILLed mid-run (and two services start, one after it)
def test_a_killed_service_leaves_its_session_running_for_the_next_service_to_serve(served):
    mark = f"MARK-{uuid.uuid4().hex[:8]}"
    client = served.start("-p", "run it", "--model", _sleeping_bash(served, mark), "--allowed-tools", "Bash",
                          "--quiet")
    try:
        wait_for(lambda: _with_mark(mark), 90, "the agent's Bash command to run")
        old = served.pid()
        ray_before = json.loads((served.root / "ray.json").read_text())
        os.kill(old, signal.SIGKILL)
        _, err = client.communicate(timeout=30)
    finally:
        client.kill()
        client.wait()
    assert client.returncode == 1
    wait_for(lambda: not _alive(old), 10, "the killed service to be gone")
    session_id = err.split("`covey attach ")[1].split("`")[0]
    line = (f"covey: the covey service stopped during the run (its log: {served.root / 'service.log'}); the "
            f"session goes on in its Ray: `covey attach {session_id}` follows it to the end")
    assert line in err.splitlines(), err
    assert _with_mark(mark)  # the agent's command runs on: the session did not die with the service
    again = served.covey("-p", "say ok", "--model", served.rules(SAY_OK), "--quiet")
    assert (again.returncode, again.stdout) == (0, "ok\n"), again.stderr
    assert served.pid() != old and _alive(served.pid())
    assert json.loads((served.root / "ray.json").read_text()) == ray_before  # the same Ray, joined
    listed = json.loads(served.covey("sessions", "--json").stdout)
    assert next(s for s in listed if s["session_id"] == session_id)["status"] == "running"
    killed = served.covey("kill", session_id)
    assert killed.returncode == 0, killed.stderr
    wait_for(lambda: not _with_mark(mark), 30, "the stopped session's Bash command to end")
