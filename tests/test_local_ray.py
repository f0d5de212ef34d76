"""The local Ray covey starts: it stays on loopback, ``covey ps`` finds it (and no other Ray), it is
private (never the one ``ray_current_cluster`` names), and a SIGTERM while it starts leaves none.

Few tests, as the Ray each starts is the slow part."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray  # the test joins the shared Ray and starts its own in a subprocess

HOLD = textwrap.dedent("""
    import asyncio, json, sys
    import ray  # imported before covey, as in a notebook
    from covey.model.scripted import ScriptedModel
    from covey.session import Session

    session = Session(cwd=sys.argv[1], model=ScriptedModel.from_dict({"rules": []}), pool_size=0)
    asyncio.run(session.start())  # a session's actors, as covey -p has them while it runs
    print(json.dumps({"session": session.session_id, "gcs": ray.get_runtime_context().gcs_address,
                      "nodes": [node["NodeManagerAddress"] for node in ray.nodes()]}), flush=True)
    sys.stdin.read()  # until the test closes it
    session.close()
""")


def _env(home: Path, ray_tmp: str) -> dict[str, str]:
    """A user's shell: own HOME and Ray temp dir, no address, no auth or network settings of its own
    (no ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``, which tests/conftest.py sets: covey keeps a Ray it
    starts on loopback by itself)."""
    home.mkdir(exist_ok=True)
    drop = ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "HOME": str(home), "RAY_TMPDIR": ray_tmp}


def _stop_processes_of(ray_tmp: str) -> None:
    """End the processes a test's ``ray start`` left, found by the temp dir in their environment."""
    marker = f"RAY_TMPDIR={ray_tmp}".encode()
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and p != str(os.getpid()) and _has(p, marker)]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 5
        while (pids := [p for p in pids if os.path.exists(f"/proc/{p}")]) and time.monotonic() < deadline:
            time.sleep(0.1)


def _has(pid: str, marker: bytes) -> bool:
    try:
        return marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def covey(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "covey", *args], env=env, capture_output=True, text=True, timeout=90)


def test_covey_rays_are_on_loopback_and_ps_finds_them_only_and_joins_one_by_address(tmp_path, ray_session):
    covey_tmp = tempfile.mkdtemp(prefix="cvr-", dir="/tmp")  # Ray's socket paths have a length limit
    env = _env(tmp_path / "home", covey_tmp)
    runs = tmp_path / "home" / ".covey" / "run"
    holder = None
    # Someone else's Ray on this machine, the test session's (no token: anyone may join it; Ray's
    # "auto" would take it, found by its processes): covey neither lists nor joins it.
    foreign = ray_session.get_runtime_context().gcs_address
    try:
        alone = covey("ps", env=env)
        assert alone.returncode == 1 and "no covey run is active" in alone.stderr, alone.stderr[-2000:]

        holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = holder.stdout.readline()
        assert line, holder.stderr.read()[-2000:]
        run = json.loads(line)
        # The Ray covey started (with Ray imported first, as in a notebook) is on loopback.
        assert run["nodes"] == ["127.0.0.1"] and run["gcs"].startswith("127.0.0.1:")
        record = json.loads((runs / f"ray-{holder.pid}.json").read_text())
        assert record["gcs_address"] == run["gcs"]
        assert Path(record["token_path"]).is_file()
        # The token of the Ray covey started is the user's alone (covey/ray/token.py).
        assert os.stat(record["token_path"]).st_mode & 0o777 == 0o600
        assert os.stat(tmp_path / "home" / ".ray").st_mode & 0o777 == 0o700
        # A stale file of a dead driver, pointing at the foreign Ray: ignored and removed.
        stale = runs / f"ray-{_dead_pid()}.json"
        stale.write_text(json.dumps({**record, "pid": int(stale.stem[4:]), "gcs_address": foreign}))

        listing = covey("ps", env=env)
        assert listing.returncode == 0, listing.stderr[-2000:]
        assert listing.stdout.startswith(f"session {run['session'][:8]}: 0 agents"), listing.stdout
        assert foreign.rsplit(":", 1)[1] not in listing.stdout + listing.stderr and not stale.exists()

        by_address = covey("ps", "--address", run["gcs"], env=env)
        assert by_address.returncode == 0, by_address.stderr[-2000:]
        assert run["session"][:8] in by_address.stdout and "InvalidAuthToken" not in by_address.stderr
    finally:
        if holder is not None:
            holder.stdin.close()
            try:
                holder.wait(timeout=60)
            except subprocess.TimeoutExpired:
                holder.kill()
        _stop_processes_of(covey_tmp)
        shutil.rmtree(covey_tmp, ignore_errors=True)
    assert holder.returncode == 0 and not (runs / f"ray-{holder.pid}.json").exists()


REPO = Path(__file__).resolve().parent.parent
OK_MODEL = f"scripted:{REPO / 'covey' / 'cli' / 'scenarios' / 'ok.yaml'}"
RUN = "import covey; print(covey.run('say ok', model={model!r}).result)"


def _dead_address() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def test_a_stale_ray_current_cluster_is_not_joined_covey_p_and_covey_run_answer_on_a_private_ray(tmp_path):
    covey_tmp = tempfile.mkdtemp(prefix="cvr-", dir="/tmp")
    env = _env(tmp_path / "home", covey_tmp)
    # What `covey stop` (or any `ray start` that ended) leaves: Ray's ray.init() would retry it for minutes.
    (Path(covey_tmp) / "ray").mkdir()
    (Path(covey_tmp) / "ray" / "ray_current_cluster").write_text(_dead_address())
    try:
        cli = subprocess.run([sys.executable, "-m", "covey", "-p", "say ok", "--no-service", "--model", OK_MODEL],
                             env=env, cwd=tmp_path, capture_output=True, text=True, timeout=90)
        assert (cli.returncode, cli.stdout) == (0, "ok\n"), cli.stderr[-2000:]
        run = subprocess.run([sys.executable, "-c", RUN.format(model=OK_MODEL)], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=90)
        assert (run.returncode, run.stdout) == (0, "ok\n"), run.stderr[-2000:]
        assert len(list((Path(covey_tmp) / "ray").glob("session_2*"))) == 2  # one private Ray each
    finally:
        _stop_processes_of(covey_tmp)
        shutil.rmtree(covey_tmp, ignore_errors=True)


def test_a_sigterm_while_ray_starts_ends_the_run_with_143_and_one_line_leaving_no_ray(tmp_path):
    covey_tmp = tempfile.mkdtemp(prefix="cvr-", dir="/tmp")
    env = _env(tmp_path / "home", covey_tmp)
    run = subprocess.Popen([sys.executable, "-m", "covey", "-p", "say ok", "--no-service", "--model", OK_MODEL],
                           env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        # Ray's session folder is the first thing its start makes; its processes come after.
        while not list(Path(covey_tmp).glob("ray/session_2*")) and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=30)
        assert run.returncode == 143, err[-2000:]
        assert (out, err) == ("", "covey: interrupted by SIGTERM; every agent was stopped\n")
        left = [p for p in os.listdir("/proc") if p.isdigit() and _has(p, f"RAY_TMPDIR={covey_tmp}".encode())]
        deadline = time.monotonic() + 10  # Ray's reaper ends what the start had begun, after the driver
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = [p for p in left if os.path.exists(f"/proc/{p}")]
        assert not left
    finally:
        if run.poll() is None:
            run.kill()
        _stop_processes_of(covey_tmp)
        shutil.rmtree(covey_tmp, ignore_errors=True)
