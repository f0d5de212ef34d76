"""Which Ray covey starts or joins, and where, without starting one: a private Ray (Ray's
``address="local"``, never ``ray_current_cluster``), in a folder of the user's own; an address
that does not answer refused in seconds; SIGTERM during a start raised as ``Interrupted``."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from covey.errors import Interrupted
from covey.ray import cluster as ray_runtime
from covey.ray import start as ray_start
from covey.ray.start import RayUnreachable

OK_MODEL = Path(__file__).resolve().parents[2] / "covey" / "cli" / "scenarios" / "ok.yaml"


@pytest.fixture(autouse=True)
def _handlers_kept():
    """A start in this process leaves Ray's driver rule for SIGTERM (``sys.exit``): not for pytest's."""
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in before.items():
        signal.signal(signum, handler)


@pytest.fixture
def init_calls(monkeypatch) -> list[dict]:
    """``ray.init`` recorded, not run (tests/conftest.py keeps it refused otherwise)."""
    calls: list[dict] = []
    monkeypatch.setattr(ray, "init", lambda **kwargs: calls.append(kwargs))
    monkeypatch.setattr(ray_runtime.ray_token, "prepare_token", lambda: None)
    return calls


def _dead_address() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def test_without_an_address_covey_starts_a_private_ray_whatever_ray_current_cluster_says(init_calls, monkeypatch):
    stale = Path(os.environ["RAY_TMPDIR"]) / "ray" / "ray_current_cluster"
    stale.parent.mkdir(exist_ok=True)
    stale.write_text(_dead_address())
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    try:
        assert ray_runtime.ensure_ray() is True
        monkeypatch.setenv("RAY_ADDRESS", "local")  # Ray's word for the same
        assert ray_runtime.ensure_ray() is True
    finally:
        stale.unlink()
    assert [call["address"] for call in init_calls] == ["local", "local"]
    assert init_calls[0]["_temp_dir"] is None  # RAY_TMPDIR is set: Ray's rule


def test_a_given_address_is_checked_then_joined_and_auto_is_rays(init_calls, monkeypatch):
    checked: list[str] = []
    monkeypatch.setattr(ray_start, "check_answers", checked.append)
    monkeypatch.setattr(ray_runtime, "send_token_if_any", lambda *_: None)
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    assert ray_runtime.ensure_ray() is False
    monkeypatch.setattr(ray_runtime, "_resolve_auto", lambda: "10.0.0.6:6379")
    assert ray_runtime.ensure_ray("auto") is False
    assert checked == ["10.0.0.5:6379", "10.0.0.6:6379"]
    assert [call["address"] for call in init_calls] == checked


def test_a_ray_jobs_driver_without_ray_address_joins_its_jobs_ray(init_calls, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv(ray_runtime.RAY_JOB_ENV, "{}")
    monkeypatch.setattr(ray_runtime, "join", lambda address, **_: init_calls.append({"address": address}))
    assert ray_runtime.ensure_ray() is False
    assert init_calls == [{"address": "auto"}]


def test_an_address_nothing_listens_at_is_refused_at_once_naming_it():
    address = _dead_address()
    started = time.monotonic()
    with pytest.raises(RayUnreachable, match=rf"^no Ray answers at {address} \(.*\): start one there"):
        ray_start.check_answers(address)
    assert time.monotonic() - started < 2


@pytest.fixture
def short() -> Iterator[Path]:
    """A folder with a short path (Ray's socket paths), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="h-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_private_ray_folder_is_in_a_folder_only_the_user_enters(monkeypatch, short):
    monkeypatch.delenv("RAY_TMPDIR")
    monkeypatch.setenv("HOME", str(short))
    assert ray_start.ray_temp_dir() == str(short / ".covey" / "ray")
    assert (short / ".covey").stat().st_mode & 0o777 == 0o700
    # A home whose path would put Ray's sockets over the kernel's limit: the user's private temp folder.
    monkeypatch.setenv("HOME", str(short / ("x" * 40)))
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    assert ray_start.ray_temp_dir() == str(short / f"covey-{os.getuid()}" / "ray")
    assert (short / f"covey-{os.getuid()}").stat().st_mode & 0o777 == 0o700


def test_a_signal_while_ray_starts_is_raised_once_ray_init_returns_and_the_handlers_come_back():
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    went_on = []
    with pytest.raises(Interrupted) as raised, ray_start.interruptible():
        # What ray.init does first (its driver's sys.exit(15) on SIGTERM) is kept out.
        ray._private.utils.set_sigterm_handler(lambda *_: pytest.fail("Ray's handler ran"))
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.5)
        went_on.append(True)  # nothing is raised inside Ray's code
    assert went_on and raised.value.signum == signal.SIGTERM and raised.value.code == 143
    with pytest.raises(KeyboardInterrupt), ray_start.interruptible():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)
    assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
    # A default SIGTERM handler becomes Ray's driver rule, as ray.init would have made it.
    assert signal.getsignal(signal.SIGTERM) in (before[signal.SIGTERM], ray_start._driver_exit)


@pytest.mark.parametrize("listening", [False, True], ids=["nothing-listens", "not-a-ray-listens"])
def test_covey_p_at_an_address_that_does_not_answer_says_so_in_one_line_within_10_s(listening, tmp_path):
    listener = socket.create_server(("127.0.0.1", 0)) if listening else None
    address = f"127.0.0.1:{listener.getsockname()[1]}" if listener else _dead_address()
    started = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-m", "covey", "-p", "say ok", "--no-service", "--address", address,
                              "--model", f"scripted:{OK_MODEL}"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    finally:
        if listener is not None:
            listener.close()
    assert time.monotonic() - started < 10
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith(f"covey: no Ray answers at {address} (") and run.stderr.count("\n") == 1, run.stderr
