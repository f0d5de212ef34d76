"""Issue 23's "done means": after a ``--no-service`` run and a service run, no file covey wrote is
readable by another user (transcripts, background output, the service's folder, Ray's token)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray  # the service runs on a Ray of its own

RULES = """\
rules:
  - reply:
      tool_use: {name: Bash, input: {command: "echo hi", run_in_background: true}}
    times: 1
  - reply: {text: "started"}
"""


def _open_to_others(folder: Path, skip: Path | None = None) -> list[str]:
    found = []
    for path in [folder, *folder.rglob("*")]:
        if skip is not None and path.is_relative_to(skip):
            continue
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            continue
        mode = path.stat().st_mode
        if stat.S_IMODE(mode) & 0o077:
            found.append(f"{path} {stat.filemode(mode)}")
    return found


def test_nothing_covey_writes_is_open_to_other_users(shared_service):
    served = shared_service  # the session's service: its folder holds what every earlier served test wrote too
    tmp = Path(served.env["TMPDIR"])  # the service's, and so its agents' (tests/service/served.py)
    rules = served.rules(RULES)
    through_service = served.covey("-p", "go", "--model", rules, "--quiet")
    assert through_service.returncode == 0, through_service.stderr
    # Without the service, joining the service's Ray (as a user on a running Ray would):
    # what the run writes is the same, and the test waits for one Ray start, not two.
    ray_address = served.status()["ray_address"]
    alone = served.covey("-p", "go", "--model", rules, "--quiet", "--no-service",
                         env={"RAY_ADDRESS": ray_address})
    assert alone.returncode == 0, alone.stderr
    home = served.base / "home"
    # Sessions are where Claude Code keeps them (docs/resume.md): ~/.claude/projects.
    covey_files = [home / ".covey", home / ".claude" / "projects", served.root, tmp / f"covey-{os.getuid()}"]
    assert any((home / ".claude" / "projects").rglob("session.json"))
    assert any((tmp / f"covey-{os.getuid()}").rglob("*.output"))
    # Compiled modules (PYTHONDONTWRITEBYTECODE set): Python writes them 0644 in folders 0755, as it
    # does beside any source; what keeps them to this user is their root, 0700.
    pycache = home / ".covey" / "pycache"
    assert not pycache.exists() or stat.S_IMODE(pycache.stat().st_mode) == 0o700
    open_files = [line for folder in covey_files if folder.exists() for line in _open_to_others(folder, skip=pycache)]
    token = home / ".ray" / "auth_token"
    if token.exists():
        open_files += _open_to_others(token)
    assert open_files == []
