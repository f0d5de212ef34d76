"""Where the covey service lives: one private directory per user, and the files in it.

``$COVEY_SERVICE_DIR``, else ``~/.covey/service`` when its socket path fits a Unix
socket address, else ``/tmp/covey-service-<uid>-<8 hex of sha256(home)>``. The
directory is the only guard of the socket (anyone who can connect drives the user's
agents with the user's key), so it is created 0700 and refused when it is not the
user's own or when group or others may enter it. Plain Python: the thin client imports it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from covey.errors import UserError

SOCKET_PATH_MAX = 100
"""Bytes: a Unix socket address holds 108 on Linux, 104 on macOS, with a NUL."""


class ServiceDirError(UserError):
    """The service directory is not private to this user."""


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
    if create:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    if root.exists():
        check_private(root)
    return ServicePaths(root)


def check_private(root: Path) -> None:
    """Refuse a directory that is a symlink, someone else's, or open to group or others."""
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode):
        raise ServiceDirError(f"covey service directory {str(root)!r} is not a directory")
    if info.st_uid != os.getuid():
        raise ServiceDirError(f"covey service directory {str(root)!r} belongs to uid {info.st_uid}, not to you")
    if info.st_mode & 0o077:
        raise ServiceDirError(
            f"covey service directory {str(root)!r} is open to others (mode {stat.S_IMODE(info.st_mode):o}): "
            f"anyone who reaches its socket drives your agents; run `chmod 700 {root}`")


def open_private(path: Path, flags: int) -> int:
    """A file descriptor for a file only the user may read or write (0600)."""
    return os.open(path, flags | os.O_CREAT, 0o600)
