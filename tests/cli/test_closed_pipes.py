"""A reader that closes the pipe early (``covey sessions | head -3``) ends the command quietly: no
BrokenPipeError traceback, exit 141 (128 + SIGPIPE, as a shell reports it). Each test runs the real
command with its stdout a pipe whose reading end is closed before the command writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import ray

from covey.client import ports as protocol
from tests.service.conftest import client_env, service_root  # noqa: F401  (a fixture)
from tests.service.fake_service import INIT, FakeService, result

COVEY = [sys.executable, "-m", "covey"]
STATUS = {"pid": 1, "uptime_s": 5, "version": "0.1.0", "ray_address": "127.0.0.1:1", "started_ray": True,
          "sessions": [], "idle_s": 1, "idle_timeout_s": 600, "socket": "s", "log": "l"}


def _with_reader_gone(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """``covey ARGS | true``: the exit status and stderr of a command whose reader left at once."""
    command = subprocess.Popen([*COVEY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, env=env, text=True)
    assert command.stdout is not None and command.stderr is not None
    command.stdout.close()  # before the command writes its first byte
    try:
        err = command.stderr.read()
        return command.wait(timeout=120), err
    finally:
        command.kill()


def _assert_quiet(code: int, err: str) -> None:
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert code == 141, err


def test_sessions_into_a_closed_pipe(tmp_path, service_root):
    folder = tmp_path / ".covey" / "sessions"
    folder.mkdir(parents=True)
    for n in range(5):
        session_id = f"{n:08x}-0000-4000-8000-000000000000"
        (folder / f"{session_id}.json").write_text(json.dumps({"session_id": session_id, "status": "finished"}))
    _assert_quiet(*_with_reader_gone("sessions", env=client_env(service_root, HOME=str(tmp_path))))


@pytest.mark.parametrize("args", [("status",), ("status", "--json")])
def test_status_into_a_closed_pipe(service_root, tmp_path, args):
    with FakeService(service_root, lambda *_: None, identity={"status": STATUS}):
        _assert_quiet(*_with_reader_gone(*args, env=client_env(service_root, HOME=str(tmp_path))))


def test_a_runs_stream_json_into_a_closed_pipe(service_root, tmp_path):
    def script(peer, _request, _prompt):
        for line in (INIT, *[{"type": "assistant", "message": {"role": "assistant", "content": []}}] * 50,
                     result("hello"), {"type": protocol.DONE}):
            peer.send(line)

    with FakeService(service_root, script):
        env = client_env(service_root, HOME=str(tmp_path))
        _assert_quiet(*_with_reader_gone("-p", "q", "--output-format", "stream-json", "--verbose", env=env))


@pytest.mark.ray
def test_ps_into_a_closed_pipe(ray_session):
    env = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address}
    _assert_quiet(*_with_reader_gone("ps", env=env))
