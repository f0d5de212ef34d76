"""The local Rays covey started for this user, one small file each.

``covey ps / tree / logs / kill / team`` read these files to find covey's own
Rays, so they never join a Ray that covey did not start (Ray's ``auto``
address takes whatever Ray runs on the machine). A file names the GCS address,
Ray's session directory, the driver's pid, and where Ray's auth token is.
It is removed when covey shuts that Ray down; one whose driver is gone is
deleted the next time the files are read. Only a file that reads as a record and
proves its driver dead is deleted: one that does not read (half written, or in a
shape a newer covey writes) is kept and passed over with a warning, for it may
describe a Ray that still runs.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

from covey.common.private_dirs import open_private, private_dir

NAMESPACE = "covey"
"""The Ray namespace of every covey actor: named actors of two sessions differ by session id."""


@dataclass(frozen=True)
class LocalRay:
    gcs_address: str
    session_dir: str
    pid: int
    pid_started: str | None
    """The driver's start time (``started_at``): a reused pid is not the driver."""
    auth_mode: str | None
    """``RAY_AUTH_MODE`` when the Ray started (Ray 2.60 sets ``token`` by default)."""
    token_path: str | None
    """The token file; None when there is no token or it came in ``RAY_AUTH_TOKEN``."""


def run_dir() -> Path:
    return Path.home() / ".covey" / "run"


def record(gcs_address: str, session_dir: str, pid: int | None = None) -> Path:
    """Write the file of the Ray this process (or ``pid``, the ``ray start`` process it ran)
    just started, private to the user. This process's own file goes when it exits."""
    folder = private_dir(run_dir())
    own = pid is None
    pid = os.getpid() if pid is None else pid
    entry = LocalRay(gcs_address, session_dir, pid, started_at(pid), os.environ.get("RAY_AUTH_MODE"), _token_path())
    path = folder / f"ray-{pid}.json"
    descriptor = open_private(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(asdict(entry), handle)
    if own:
        atexit.register(forget)  # a driver that exits without shutting Ray down leaves no file behind
    return path


def forget(pid: int | None = None) -> None:
    (run_dir() / f"ray-{os.getpid() if pid is None else pid}.json").unlink(missing_ok=True)


def live() -> list[LocalRay]:
    """The recorded Rays whose driver still runs, oldest first; files of dead drivers are removed,
    files that do not read are kept (see the module's docstring)."""
    found = []
    for path in sorted(run_dir().glob("ray-*.json"), key=_mtime):
        entry = _read(path)
        if entry is None:
            log.warning("%s does not read as a covey Ray record (half written, or from another covey version); "
                        "kept, and passed over", path)
        elif _alive(entry):
            found.append(entry)
        else:
            path.unlink(missing_ok=True)
    return found


_TYPES: dict[str, tuple[type, ...]] = {"gcs_address": (str,), "session_dir": (str,), "pid": (int,),
                                       "pid_started": (str, type(None)), "auth_mode": (str, type(None)),
                                       "token_path": (str, type(None))}


def _read(path: Path) -> LocalRay | None:
    """The record, or None when the file is not one this covey can read (keys it adds are ignored:
    the ones read here keep their meaning)."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    known: dict[str, Any] = {f.name: data.get(f.name) for f in fields(LocalRay)}
    if any(name not in data or not isinstance(known[name], _TYPES[name]) or isinstance(known[name], bool)
           for name in known):
        return None
    return LocalRay(**known)


def _alive(entry: LocalRay) -> bool:
    try:
        os.kill(entry.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process now has the pid
        return False
    return entry.pid_started is None or started_at(entry.pid) == entry.pid_started


def started_at(pid: int) -> str | None:
    """When the process started, in a form that never changes while it lives; None if it is gone.
    On Linux the clock ticks from boot to its start (``/proc``'s own figure, as earlier coveys'
    records hold it; a change of the system clock moves psutil's epoch time, not this), elsewhere
    psutil's start time (macOS keeps it in the kernel's process table)."""
    import psutil  # only here: modules that want NAMESPACE alone do not pay for it

    try:
        created = psutil.Process(pid).create_time()
    except psutil.Error:  # gone (or a zombie psutil cannot read)
        return None
    if not psutil.LINUX:
        return repr(created)
    return str(round((created - psutil.boot_time()) * os.sysconf("SC_CLK_TCK")))


def _token_path() -> str | None:
    if os.environ.get("RAY_AUTH_TOKEN"):
        return None  # never copy the token itself into a file
    path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
    return str(path) if path.is_file() else None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
