"""``covey logs [-f]``: a file copied to stdout and, when followed, what is appended to it.

Following waits on the system's file events (``watchfiles``: inotify, FSEvents, kqueue) rather
than polling, so a new line shows at once and a quiet file costs nothing. A file turned over
(renamed away, a new one in its place) is finished, then the new one is read from its start;
one cut short is read again from its start.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import threading

    from watchfiles import Change

QUIET_WAKE_MS = 1_000
"""How long the follower waits without an event before it looks anyway: the lines written between
the first copy and the watch starting, and file systems that send no events (NFS), show within it."""
GATHER_MS = 50
"""Events this close together are read as one (a writer's burst), at most ``GATHER_MAX_MS`` long."""
GATHER_MAX_MS = 200


def print_file(path: Path, follow: bool, out: TextIO | None = None, stop: threading.Event | None = None) -> None:
    """Copy ``path`` to ``out`` (stdout); with ``follow``, keep copying what is appended until
    Ctrl-C, or until ``stop`` (a ``threading.Event``) is set."""
    out = sys.stdout if out is None else out
    handle = _open(path)
    try:
        _copy(handle, out)
        if follow:
            handle = _follow(path, handle, out, stop)
    finally:
        handle.close()


def _follow(path: Path, handle: TextIO, out: TextIO, stop: threading.Event | None) -> TextIO:
    """Copy what is appended to ``path`` whenever it changes; the handle open at the end."""
    from watchfiles import watch

    def ours(_change: Change, changed: str) -> bool:
        return Path(changed).name == path.name

    # The folder, not the file: a file turned over is a new file under the same name.
    for _changes in watch(path.parent, watch_filter=ours, debounce=GATHER_MAX_MS, step=GATHER_MS,
                          stop_event=stop, rust_timeout=QUIET_WAKE_MS, yield_on_timeout=True,
                          recursive=False):
        handle = _current(path, handle, out)
        _copy(handle, out)
    return handle


def _current(path: Path, handle: TextIO, out: TextIO) -> TextIO:
    """The handle to read ``path`` on from: a new one if the file was turned over (the rest of
    the old one copied first), the same one rewound if the file was cut short."""
    try:
        now = os.stat(path)
    except FileNotFoundError:  # renamed away, its successor not made yet
        return handle
    if now.st_ino != os.fstat(handle.fileno()).st_ino:
        _copy(handle, out)
        handle.close()
        return _open(path)
    if now.st_size < os.lseek(handle.fileno(), 0, os.SEEK_CUR):
        handle.seek(0)
    return handle


def _open(path: Path) -> TextIO:
    return open(path, encoding="utf-8", errors="replace")


def _copy(handle: TextIO, out: TextIO) -> None:
    if text := handle.read():
        out.write(text)
        out.flush()
