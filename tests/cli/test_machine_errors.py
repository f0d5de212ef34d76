"""What the person's machine holds (a HOME covey cannot write, a full disk) is one line naming
what failed and where, never a traceback."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from covey.errors import UserError, error_line

REPO = Path(__file__).resolve().parents[2]


def test_an_os_error_is_its_reason_and_its_path():
    assert error_line(OSError(errno.EROFS, "Read-only file system", "/home/me/.covey")) == \
        "Read-only file system: /home/me/.covey"
    assert error_line(OSError(errno.ENOSPC, "No space left on device")) == "No space left on device"
    assert error_line(UserError("bad flag")) == "bad flag"


def test_a_home_covey_cannot_write_is_one_line_for_every_command(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    service_dir = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp")) / "svc"
    env = {**os.environ, "HOME": str(blocker / "home"), "COVEY_SERVICE_DIR": str(service_dir)}
    env.pop("COVEY_NO_SERVICE", None)
    for command in (["-p", "say ok", "--model", "scripted:covey/cli/scenarios/ok.yaml"], ["status"], ["sessions"]):
        done = subprocess.run([sys.executable, "-m", "covey", *command], cwd=REPO, env=env, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=60)
        lines = done.stderr.strip().splitlines()
        assert len(lines) <= 1 and "Traceback" not in done.stderr, (command, done.stderr)
        if command[0] == "-p":
            assert done.returncode == 1 and "Not a directory" in lines[0] and str(blocker) in lines[0], lines
    shutil.rmtree(service_dir.parent, ignore_errors=True)
    assert not _processes_with(f"HOME={env['HOME']}"), "a process of the failed start was left running"


def _processes_with(marker: str) -> list[int]:
    import psutil

    found = []
    for process in psutil.process_iter():
        try:
            if f"{marker}" in [f"{k}={v}" for k, v in process.environ().items()] and process.pid != os.getpid():
                found.append(process.pid)
        except psutil.Error:
            continue
    return found


def test_a_start_that_wrote_no_log_on_a_full_disk_says_the_disk_is_full(tmp_path, monkeypatch):
    from covey.client import failed_start
    from covey.client.paths import ServicePaths

    paths = ServicePaths(tmp_path)
    paths.log.write_text("")
    monkeypatch.setattr(failed_start.shutil, "disk_usage", lambda folder: type("U", (), {"free": 0})())
    assert failed_start.start_failure(paths).startswith(f"No space left on device: the disk that holds {tmp_path}")
