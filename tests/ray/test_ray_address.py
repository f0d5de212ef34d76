"""A Ray Client address (``ray://``) is refused in one line before anything starts, however it is
given: covey's sessions stream through Ray's streaming generators and async actor calls, which Ray
Client does not carry. These tests are Ray-free: starting Ray here would itself fail them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import covey
from covey.errors import UserError
from covey.ray.cluster import ensure_ray

COVEY = [sys.executable, "-m", "covey"]
CLIENT = "ray://127.0.0.1:10001"


def _refused_line(text: str, given: str) -> None:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert lines[0].startswith(f"covey: {given}: covey does not run through Ray Client")
    assert "HOST:6379" in lines[0] and "covey start --address auto" in lines[0] and "ray job submit" in lines[0]


@pytest.mark.parametrize("args, env, given", [
    (["-p", "q", "--address", CLIENT], {}, f"--address {CLIENT}"),
    (["q"], {"RAY_ADDRESS": CLIENT}, f"RAY_ADDRESS={CLIENT}"),
    (["-p", "q", "--detach"], {"RAY_ADDRESS": CLIENT}, f"RAY_ADDRESS={CLIENT}"),
    (["start", "--address", CLIENT], {}, f"--address {CLIENT}"),
    (["start"], {"RAY_ADDRESS": CLIENT}, f"RAY_ADDRESS={CLIENT}"),
    (["demo", "--address", CLIENT], {}, f"--address {CLIENT}"),
    (["ps", "--address", CLIENT], {}, f"--address {CLIENT}"),
    (["attach", "0b9c9a40"], {"RAY_ADDRESS": CLIENT}, f"RAY_ADDRESS={CLIENT}"),
])
def test_the_command_refuses_it_before_starting_anything(tmp_path, args, env, given):
    home = tmp_path / "home"
    home.mkdir()
    full_env = {**os.environ, "HOME": str(home), "COVEY_SERVICE_DIR": str(tmp_path / "svc"), **env}
    done = subprocess.run([*COVEY, *args], env=full_env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and done.stdout == ""
    _refused_line(done.stderr, given)
    assert list(home.iterdir()) == [] and not (tmp_path / "svc").exists()  # no service, no Ray, no file


@pytest.mark.parametrize("make", [
    lambda: covey.run("q", address=CLIENT, model="scripted:none.yaml"),
    lambda: covey.Session(address=CLIENT, model="scripted:none.yaml"),
    lambda: covey.Session(address=CLIENT, detach=True),
    lambda: ensure_ray(CLIENT),
])
def test_python_refuses_it_before_starting_anything(make):
    with pytest.raises(UserError, match=f"address[= ]{re.escape(CLIENT)}: covey does not run through Ray Client"):
        make()


def test_python_refuses_ray_address_too(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("RAY_ADDRESS", CLIENT)
    with pytest.raises(UserError, match=f"RAY_ADDRESS={re.escape(CLIENT)}: covey does not run through Ray Client"):
        covey.Session(cwd=str(tmp_path), model="scripted:none.yaml")
    with pytest.raises(UserError, match=f"RAY_ADDRESS={re.escape(CLIENT)}"):
        ensure_ray()


def test_a_gcs_address_is_not_refused_here():
    from covey.ray.address import check_run_address

    check_run_address("10.0.0.5:6379", {})
    check_run_address("auto", {"RAY_ADDRESS": CLIENT})  # the address given wins over RAY_ADDRESS
