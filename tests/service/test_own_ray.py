"""The service's own Ray is started in the user's private Ray folder, not the shared ``/tmp/ray``
(whose ``ray_current_cluster`` every plain ``ray.init()`` on the machine reads); a ``RAY_TMPDIR``
the user set is Ray's to use. The command is checked, not run."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from covey.client.paths import service_paths
from covey.errors import CoveyError
from covey.ray import own_ray


class _Exited:
    """A ``ray start`` that exited at once: ``start`` reports it, and the test reads its command."""

    def __init__(self, command: list[str], **_: object) -> None:
        self.command, self.pid, self.returncode = command, 0, 1

    def poll(self) -> int:
        return 1


def _command(monkeypatch) -> list[str]:
    started: list[_Exited] = []
    monkeypatch.setattr(subprocess, "Popen", lambda command, **kw: started.append(_Exited(command)) or started[-1])
    with pytest.raises(CoveyError, match="exited with 1"):
        own_ray.start(service_paths())
    return started[0].command


@pytest.mark.parametrize("user_set_tmpdir", [False, True])
def test_the_services_ray_keeps_its_sessions_in_the_users_private_folder(tmp_path, monkeypatch, user_set_tmpdir):
    home = Path(tempfile.mkdtemp(prefix="h-", dir="/tmp"))  # short: Ray's socket paths
    try:
        _check_command(tmp_path, monkeypatch, user_set_tmpdir, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _check_command(tmp_path: Path, monkeypatch, user_set_tmpdir: bool, home: Path) -> None:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COVEY_SERVICE_DIR", str(tmp_path / "svc"))
    if not user_set_tmpdir:
        monkeypatch.delenv("RAY_TMPDIR")
    command = _command(monkeypatch)
    if user_set_tmpdir:
        assert "--temp-dir" not in command
    else:
        assert command[command.index("--temp-dir") + 1] == str(home / ".covey" / "ray")
        assert (home / ".covey").stat().st_mode & 0o777 == 0o700


def test_the_ports_given_to_rays_agents_are_free_and_outside_the_kernels_ephemeral_range():
    """A port the kernel may hand to any process's next connection could be taken before Ray binds it."""
    low, high = own_ray._ephemeral_range()
    ports = {own_ray._free_port(set()) for _ in range(50)}
    assert all(not low <= port <= high and 20_000 <= port < 32_768 for port in ports), ports
    assert len(ports) > 1


def test_the_ports_of_one_node_are_all_different_even_when_chance_repeats_one(monkeypatch):
    """Ray refuses to start a node whose components were given the same port twice."""
    picks = iter([24_559, 24_559, 24_559, 24_560, 24_561])
    monkeypatch.setattr(own_ray, "_ephemeral_range", lambda: (49_152, 65_535))
    monkeypatch.setattr(own_ray.random, "randrange", lambda low, high: next(picks))
    taken: set[int] = set()
    assert [own_ray._free_port(taken) for _ in range(3)] == [24_559, 24_560, 24_561] and taken == {24_559, 24_560, 24_561}


def test_a_crowded_range_falls_back_to_the_kernels_choice(monkeypatch):
    monkeypatch.setattr(own_ray, "_ephemeral_range", lambda: (0, 65_535))  # every candidate is ephemeral
    taken: set[int] = set()
    ports = [own_ray._free_port(taken) for _ in range(3)]
    assert all(0 < port < 65_536 for port in ports) and len(set(ports)) == 3


def test_on_macos_the_ephemeral_range_is_the_one_sysctl_names(monkeypatch):
    asked = []

    def sysctl(command, **kwargs):
        asked.append(command)
        return subprocess.CompletedProcess(command, 0, stdout="49152\n65535\n", stderr="")

    monkeypatch.setattr(own_ray.sys, "platform", "darwin")
    monkeypatch.setattr(own_ray.subprocess, "run", sysctl)
    assert own_ray._ephemeral_range() == (49_152, 65_535)
    assert asked == [["sysctl", "-n", "net.inet.ip.portrange.first", "net.inet.ip.portrange.last"]]


@pytest.mark.parametrize("failure", [FileNotFoundError("sysctl"), subprocess.CalledProcessError(1, "sysctl"),
                                     subprocess.TimeoutExpired("sysctl", 5)])
def test_a_system_that_names_no_range_gets_ianas(monkeypatch, failure):
    def sysctl(command, **kwargs):
        raise failure

    monkeypatch.setattr(own_ray.sys, "platform", "freebsd14")
    monkeypatch.setattr(own_ray.subprocess, "run", sysctl)
    assert own_ray._ephemeral_range() == own_ray.IANA_EPHEMERAL == (49_152, 65_535)


def test_on_linux_the_ephemeral_range_is_the_kernels_own(monkeypatch):
    if not sys.platform.startswith("linux"):
        pytest.skip("Linux's /proc file")
    low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    assert own_ray._ephemeral_range() == (int(low), int(high))
