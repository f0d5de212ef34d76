"""Where the covey service lives: one private directory per user, and the files in it.

``$COVEY_SERVICE_DIR``, else ``~/.covey/service`` when its socket path fits a Unix
socket address, else ``/tmp/covey-service-<uid>-<8 hex of sha256(home)>``. The
directory is the only guard of the socket (anyone who can connect drives the user's
agents with the user's key), so it is made and checked by ``covey.common.private_dirs``:
created 0700, refused when it is a symlink, another user's (the ``/tmp`` name is
predictable: someone may make it first) or writable by others, and tightened to 0700
when others may only enter it. Plain Python: the thin client imports it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from covey.common.private_dirs import PrivateDirError, open_private, private_dir

SOCKET_PATH_MAX = 100
"""Bytes: a Unix socket address holds 108 on Linux, 104 on macOS, with a NUL."""


ServiceDirError = PrivateDirError
"""The service directory is not private to this user (the one error of every private folder)."""

__all__ = ["SOCKET_PATH_MAX", "ServiceDirError", "ServicePaths", "open_private", "service_dir", "service_paths",
           "write_private_json"]


@dataclass(frozen=True)
class ServicePaths:
    root: Path

    @property
    def socket(self) -> Path:
        return self.root / "service.sock"

    @property
    def info(self) -> Path:
        """``service.json``: pid, started_at, Ray address, idle timeout, covey version."""
        return self.root / "service.json"

    @property
    def lock(self) -> Path:
        """Held (flock) by the living service for its whole life."""
        return self.root / "service.lock"

    @property
    def start_lock(self) -> Path:
        """Held by a client around "does one answer? else start one"."""
        return self.root / "start.lock"

    @property
    def log(self) -> Path:
        """The service's stdout and stderr (Ray's warnings included)."""
        return self.root / "service.log"


def write_private_json(path: Path, value: Any) -> None:
    """``path`` as ``value``'s JSON, 0600, written whole: readers never see half a file."""
    partial = path.with_suffix(path.suffix + ".partial")
    descriptor = open_private(partial, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(value, handle)
    os.replace(partial, path)


def service_dir() -> Path:
    if configured := os.environ.get("COVEY_SERVICE_DIR"):
        return Path(configured).expanduser().absolute()
    home = Path.home()
    preferred = home / ".covey" / "service"
    if len(os.fsencode(preferred / "service.sock")) < SOCKET_PATH_MAX:
        return preferred
    digest = hashlib.sha256(os.fsencode(home)).hexdigest()[:8]
    return Path(f"/tmp/covey-service-{os.getuid()}-{digest}")


def service_paths(create: bool = True) -> ServicePaths:
    """The service's files; the directory is created (0700) and checked first."""
    root = service_dir()
    if create or os.path.lexists(root):
        private_dir(root, "covey service directory")
    return ServicePaths(root)
