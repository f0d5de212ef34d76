"""What keeps a covey run from hanging on, or sharing, somebody else's Ray.

A private Ray lives in a folder only this user may enter (``ray_temp_dir``): Ray makes
its own folders 0777, and ``/tmp/ray`` is shared by everyone on the machine. An address
covey is to join is checked first (``check_answers``): Ray itself would retry a dead
one for minutes, deaf to Ctrl-C. And a SIGINT or SIGTERM while Ray starts or is joined
ends the start as soon as ``ray.init`` returns (``interruptible``), never from inside it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from covey.common.private_dirs import private_dir, user_temp_dir
from covey.errors import Interrupted, UserError

ANSWER_TIMEOUT_S = 3.0
"""How long an address has to answer as a Ray before covey gives up on it (Ray's own wait is minutes): a
GCS answers its cluster id in milliseconds, and a run that started in seconds must fail within 10."""
CONNECT_TIMEOUT_S = 2.0
"""The TCP connect alone, within ``ANSWER_TIMEOUT_S``."""
TEMP_DIR_MAX = 40
"""The longest Ray temp dir whose socket paths (``<dir>/session_<date>_<time>_<us>_<pid>/sockets/plasma_store``,
about 65 more bytes) stay under the kernel's 107-byte limit for a Unix socket."""
HOW_TO = ("start one there (`ray start --head --port PORT`), give the address of a running Ray "
          "(--address / RAY_ADDRESS), or give none for a private Ray")


class RayUnreachable(UserError):
    """No Ray answers at the address covey was given."""


def ray_temp_dir() -> str | None:
    """The folder a Ray covey starts keeps its sessions in: None when the user chose one
    (``RAY_TMPDIR``: Ray's own rule applies); else ``~/.covey/ray``, or ``<tmp>/covey-<uid>/ray``
    when the home one's path is too long for Ray's sockets. Ray makes that folder (and each
    it makes in it) 0777 whoever made it: what keeps it private is its parent, made or checked 0700."""
    if os.environ.get("RAY_TMPDIR"):
        return None
    home = Path.home() / ".covey"
    parent = private_dir(home) if len(str(home / "ray")) <= TEMP_DIR_MAX else user_temp_dir()
    return str(parent / "ray")


def check_answers(address: str, timeout_s: float = ANSWER_TIMEOUT_S) -> None:
    """Raise ``RayUnreachable`` unless something accepts a connection at ``address`` and, for a
    GCS address (not ``ray://``), answers as a Ray's GCS, all within ``timeout_s``."""
    client = address.startswith("ray://")
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise RayUnreachable(f"{address!r} is not a Ray address (HOST:PORT, or ray://HOST:PORT)")
    deadline = time.monotonic() + timeout_s
    try:
        with socket.create_connection((host, int(port)), timeout=min(CONNECT_TIMEOUT_S, timeout_s)):
            pass
    except OSError as exc:
        raise RayUnreachable(f"no Ray answers at {address} ({exc.strerror or exc}): {HOW_TO}") from None
    if not client:
        _check_gcs(address, max(deadline - time.monotonic(), 0.5))


def _check_gcs(address: str, timeout_s: float) -> None:
    """Ray's own GCS client asks for the cluster's id. Where no GCS answers it blocks (in C++,
    for Ray's ``py_gcs_connect_timeout_s``, 30 s, and more), so it runs in a thread this one
    waits for with a bound; a thread left waiting ends on Ray's own timeout. Any answer, an
    error included (a token Ray refuses, a version it does not speak), is a Ray answering:
    ``ray.init`` then says what is wrong."""
    done = threading.Event()

    def ask() -> None:
        try:
            # ray/_raylet.pyi leaves out names the compiled module has.
            from ray._raylet import GcsClient  # type: ignore[attr-defined]

            GcsClient(address=address)
        except Exception:  # an answer all the same; ray.init reports it
            pass
        finally:
            done.set()

    threading.Thread(target=ask, name="covey-gcs-check", daemon=True).start()
    if not done.wait(timeout_s):
        raise RayUnreachable(f"no Ray answers at {address} (something listens there, but no Ray GCS "
                             f"answered in time): {HOW_TO}")


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """While Ray starts or is joined, in the main thread: a SIGINT or SIGTERM is noted, and
    raised (``KeyboardInterrupt``, ``Interrupted``) once ``ray.init`` has returned, for the
    caller to undo the start. Never inside Ray's code: an exception raised there at a random
    point was seen to leave the logging lock taken (the run then hung) or to be swallowed;
    so Ray's own SIGTERM handler (``sys.exit(15)`` from wherever it is) is kept out too. In a
    ``covey`` command (``sigterm_raises``) a second signal leaves at once, with one line: Ray's
    reaper ends what the start began. Afterwards each handler is what it was (a default
    SIGTERM one becomes Ray's driver rule: exit through ``atexit``, which shuts Ray down).
    Outside the main thread signals are not this thread's: nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from ray._private import utils as ray_utils

    received: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        if received and _in_command:
            os.write(2, f"covey: interrupted by {signal.Signals(signum).name}\n".encode())
            os._exit(128 + signum)
        received.append(signum)

    before = {signum: signal.signal(signum, note) for signum in (signal.SIGINT, signal.SIGTERM)}
    own_handler = ray_utils.set_sigterm_handler
    ray_utils.set_sigterm_handler = lambda _handler: None
    try:
        yield
    finally:
        ray_utils.set_sigterm_handler = own_handler
        for signum, handler in before.items():
            signal.signal(signum, _driver_exit if handler in (signal.SIG_DFL, None) and signum == signal.SIGTERM
                          else handler if handler is not None else signal.SIG_DFL)
    if received:
        raise KeyboardInterrupt if received[0] == signal.SIGINT else Interrupted(received[0])


def _driver_exit(signum: int, _frame: FrameType | None) -> Any:
    sys.exit(signum)  # what Ray's driver does on SIGTERM


def _raise_interrupted(signum: int, _frame: FrameType | None) -> Any:
    raise Interrupted(signum)


_in_command = False
"""An in-process ``covey`` command runs (``sigterm_raises``): a second signal during a start leaves at once."""


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """For a whole in-process ``covey`` command: SIGTERM raises ``Interrupted`` in the main thread,
    as SIGINT raises ``KeyboardInterrupt``, so the run ends through its cleanup with one line;
    the handler before is back afterwards."""
    global _in_command
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _raise_interrupted)
    _in_command = True
    try:
        yield
    finally:
        _in_command = False
        signal.signal(signal.SIGTERM, before if before is not None else signal.SIG_DFL)
