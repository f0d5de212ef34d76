"""End to end, the key stays in covey: a model's Bash command that reads its own environment,
its parent's (``/proc/$PPID/environ``) and every ancestor's and covey process's (psutil) finds
neither the API key nor Ray's auth token, on a private Ray covey starts with the key in its
environment and on the shared Ray through the model gateway (the requests still carry the key)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI
from tests.inprocess_covey import covey_here
from tests.test_local_ray import _env, _stop_processes_of

pytestmark = pytest.mark.ray

KEY = "sk-ant-e2e-the-key-stays-in-covey"

WALK = textwrap.dedent("""
    import os, subprocess, sys, psutil
    out = ["## parent", open(f"/proc/{os.getppid()}/environ", "rb").read().decode(errors="replace"),
           "## env", subprocess.run(["env"], capture_output=True, text=True).stdout]
    chain, process = [], psutil.Process()
    while process is not None:
        try:
            out += [f"## {process.pid} {' '.join(process.cmdline())}", repr(process.environ())]
        except psutil.Error as exc:
            out += [f"## {process.pid} unreadable: {exc!r}"]
        chain.append(" ".join(process.cmdline()) if process.is_running() else "")
        process = process.parent()
    mark = sys.argv[2]
    for other in psutil.process_iter():
        try:
            environ = other.environ()
        except psutil.Error:
            continue
        if mark and any(mark in value for value in environ.values()):
            out += [f"## covey process {other.pid}", repr(environ)]
    open(sys.argv[1], "w").write("\\n".join(out))
    print("walked", len(chain), "|".join(chain))
""")


def _model(tmp_path: Path, mark: str) -> Path:
    (tmp_path / "walk.py").write_text(WALK)
    command = f"{sys.executable} {tmp_path / 'walk.py'} {tmp_path / 'dump.txt'} {mark}"
    rules = {"rules": [{"when": {"last_tool_result_contains": "walked"}, "reply": {"text": "all done"}},
                       {"reply": {"tool_use": {"name": "Bash", "input": {"command": command}}}}]}
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    return tmp_path / "rules.json"


def test_a_command_on_a_private_ray_finds_no_key_in_any_ancestor_or_covey_process(tmp_path):
    covey_tmp = tempfile.mkdtemp(prefix="cvk-", dir="/tmp")
    env = {**_env(tmp_path / "home", covey_tmp), "ANTHROPIC_API_KEY": KEY, "COVEY_NO_SERVICE": "1"}
    model = _model(tmp_path, covey_tmp)
    try:
        run = subprocess.run([sys.executable, "-m", "covey", "-p", "go", "--model", f"scripted:{model}",
                              "--allowed-tools", "Bash", "--output-format", "json"],
                             env=env, cwd=tmp_path, capture_output=True, text=True, timeout=150)
        assert run.returncode == 0, run.stderr[-2000:]
        assert json.loads(run.stdout)["result"] == "all done"
        token = (tmp_path / "home" / ".ray" / "auth_token").read_text().strip()
    finally:
        _stop_processes_of(covey_tmp)
        shutil.rmtree(covey_tmp, ignore_errors=True)
    dump = (tmp_path / "dump.txt").read_text()
    assert "raylet" in dump and "-m covey -p go" in dump  # the walk went through the raylet up to the driver
    assert dump.count("## covey process") >= 3  # the raylet and the workers, found by their RAY_TMPDIR
    assert KEY not in dump and token and token not in dump


@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_a_command_of_an_agent_on_the_gateway_path_sees_no_key_and_the_requests_carry_it(tmp_path):
    command = f"{sys.executable} {tmp_path / 'walk.py'} {tmp_path / 'dump.txt'} ''"
    (tmp_path / "walk.py").write_text(WALK)

    def bash_then_done(body):
        last = body["messages"][-1]
        if isinstance(last["content"], list) and any(b.get("type") == "tool_result" for b in last["content"]):
            return {"text": "all done"}
        return {"content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": command}}]}

    with FakeMessagesAPI(replies=[bash_then_done]) as api:
        done = covey_here("-p", "go", "--allowed-tools", "Bash", "--output-format", "json", cwd=tmp_path,
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": KEY, "RAY_AUTH_TOKEN_PATH": "/x"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "all done"
    assert [sent.removeprefix("Bearer ") for sent in api.credentials] == [KEY, KEY]  # the gateway sent it
    dump = (tmp_path / "dump.txt").read_text()
    assert "## parent" in dump and KEY not in dump and "RAY_AUTH_TOKEN_PATH=/x" not in dump
    assert KEY not in json.dumps(api.requests[1])  # nor in what the command's output told the model
