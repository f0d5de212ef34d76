"""A covey service that could not start, from a client's side: the one line that says why (the
cause its log gives, not its traceback), and the processes it started, ended. Plain Python: the
thin client imports it."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path

from covey.client.paths import ServicePaths

STOP_GRACE_S = 5.0


def end_tree(pid: int) -> None:
    """SIGTERM a process and everything under it (the service's ``ray start`` and what that
    started), SIGKILL what is left after ``STOP_GRACE_S``."""
    import psutil  # only on this path: the thin client does not pay for it otherwise

    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return
    for process in tree:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, left = psutil.wait_procs(tree, timeout=STOP_GRACE_S)
    for process in left:
        with contextlib.suppress(psutil.Error):
            process.kill()


def _disk_full(folder: Path, least_bytes: int = 1 << 20) -> bool:
    try:
        return shutil.disk_usage(folder).free < least_bytes
    except OSError:
        return False


_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b:? ?(.*)$")
"""The last line of a Python traceback: ``ValueError: ...``, ``covey.errors.CoveyError: ...``."""


def start_failure(paths: ServicePaths, offset: int = 0) -> str:
    """One line: the cause the log since ``offset`` gives for a failed start (the last exception's
    message, or the one it wraps when that one only says to see the log), and where the log is."""
    try:
        with open(paths.log, "rb") as log:
            # A log shorter than the offset was turned over as the service started: all of it is new.
            log.seek(offset if offset <= os.fstat(log.fileno()).st_size else 0)
            text = log.read().decode(errors="replace")
    except OSError:
        return f"it wrote no log at {paths.log}"
    errors = [line.strip() for line in text.splitlines() if _EXCEPTION_LINE.match(line.strip())]
    if not text.strip() and _disk_full(paths.root):
        return f"No space left on device: the disk that holds {paths.root} is full"
    if not errors:
        last = [line.strip() for line in text.splitlines() if line.strip()]
        return f"{last[-1]} (its log: {paths.log})" if last else f"its log {paths.log} is empty"
    cause = errors[-1]
    if len(errors) > 1 and "see " in cause:  # covey's own wrapper names the log; the line before says why
        cause = next((line for line in reversed(errors[:-1]) if "see " not in line), cause)
    return f"{cause} (its log: {paths.log})"
