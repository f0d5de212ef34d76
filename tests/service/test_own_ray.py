"""The service's own Ray is started in the user's private Ray folder, not the shared ``/tmp/ray``
(whose ``ray_current_cluster`` every plain ``ray.init()`` on the machine reads); a ``RAY_TMPDIR``
the user set is Ray's to use. The command is checked, not run."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from covey.daemon.paths import service_paths
from covey.errors import CoveyError
from covey.service import own_ray


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
