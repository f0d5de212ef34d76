"""Finding, starting, waiting for and stopping the covey service, from a client's side.

A service is running when its socket answers a ping. When none answers, a client
takes ``start.lock`` (so two clients that start at once end up with one service),
asks again, and otherwise starts ``python -m covey.service`` detached, with its own
environment, and waits until it answers. The service itself takes ``service.lock``
for its whole life: a second one started by a race sees it held and leaves.
Plain Python: the thin client imports it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from covey.client import leftovers
from covey.client import ports as protocol
from covey.client.failed_start import end_tree, start_failure
from covey.client.paths import ServicePaths, open_private
from covey.common.subprocess_env import with_kept_bytecode
from covey.errors import CoveyError, UserError

READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 60.0
PING_TIMEOUT_S = 5.0
POLL_S = 0.05


class ServiceUnavailable(CoveyError):
    """The covey service could not be started, or stopped answering."""


class LineTooLong(UserError):
    """A line the service would refuse to read (over ``protocol.LINE_LIMIT``): not sent. The person's
    input made it (a prompt, a message, an environment), so the person must make it smaller."""


class Connection:
    """One connection to the service: JSON lines out, JSON lines in."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._lines = sock.makefile("rb")
        self.run_id: str | None = None
        """The request id of the run this connection sent (its answer names it)."""

    def send(self, message: Mapping[str, Any]) -> None:
        self.send_line(protocol.encode(message), protocol.subtype_of(message) or message.get("type", "message"))

    def send_line(self, line: bytes, kind: str = "user") -> None:
        """A line encoded already (``protocol.encode``), so a long prompt is not encoded twice."""
        if len(line) > protocol.LINE_LIMIT:
            raise LineTooLong(f"a {kind} line of {len(line):,} bytes is over the covey service's limit of "
                              f"{protocol.LINE_LIMIT:,} bytes a line; not sent")
        self.sock.sendall(line)

    def receive(self) -> dict[str, Any] | None:
        """The next line, or None once the service closed the connection."""
        try:
            line = self._lines.readline()
        except (ConnectionResetError, socket.timeout):
            return None
        return protocol.decode(line) if line else None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._lines.close()
            self.sock.close()


def connect(paths: ServicePaths, timeout_s: float | None = PING_TIMEOUT_S) -> Connection | None:
    """A connection to the service, or None when nothing listens (no socket, a stale one)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        sock.connect(str(paths.socket))
    except (FileNotFoundError, ConnectionRefusedError, socket.timeout, OSError):
        sock.close()
        return None
    return Connection(sock)


def ask(paths: ServicePaths, subtype: str, timeout_s: float = PING_TIMEOUT_S, **fields: Any) -> dict[str, Any] | None:
    """One control request on a fresh connection; its response, or None if nothing answers (or it is an error)."""
    conn = connect(paths, timeout_s)
    if conn is None:
        return None
    try:
        request = protocol.control_request(subtype, **fields)
        conn.send(request)
        reply = conn.receive()
    except OSError:
        return None
    finally:
        conn.close()
    if not reply or reply.get("type") != "control_response":
        return None
    return reply["response"].get("response") if reply["response"].get("subtype") == "success" else None


def ping(paths: ServicePaths) -> dict[str, Any] | None:
    return ask(paths, protocol.PING)


def ensure_service(paths: ServicePaths, *, address: str | None = None, idle_timeout_s: float | None = None,
                   before_start: Callable[[], None] | None = None, dashboard: bool = False) -> tuple[dict[str, Any], bool]:
    """The running service's ping answer, and whether this call started it. ``before_start``
    runs only when this call is about to start one: it may raise to start none."""
    if answer := ping(paths):
        return answer, False
    with _flock(paths.start_lock):
        if answer := ping(paths):  # another client started one while this one waited
            return answer, False
        if before_start is not None:
            before_start()
        since = paths.log.stat().st_size if paths.log.exists() else 0
        process = spawn(paths, address=address, idle_timeout_s=idle_timeout_s, dashboard=dashboard)
        return wait_ready(paths, process, since), True


def starting_line(paths: ServicePaths, address: str | None = None) -> str:
    """What a person at a terminal is told while the first run starts the service."""
    ray = f"the Ray at {address}" if address else "a Ray of its own on 127.0.0.1"
    return (f"covey: starting the covey service ({ray}); the first run takes a few seconds, "
            f"later runs answer at once. Its log: {paths.log}")


def spawn(paths: ServicePaths, *, address: str | None, idle_timeout_s: float | None,
          dashboard: bool = False) -> subprocess.Popen[bytes]:
    """``python -m covey.service``, detached from this terminal, with this process's environment."""
    command = [sys.executable, "-m", "covey.service"]
    if address:
        command += ["--address", address]
    if dashboard:
        command += ["--dashboard"]
    if idle_timeout_s is not None:
        command += ["--idle-timeout", str(idle_timeout_s)]
    log = open_private(paths.log, os.O_WRONLY | os.O_APPEND)
    try:
        # cwd: the service must not hold on to a client's folder (the demo's is temporary).
        # The service's mark is in its environment from its start: every process under it
        # inherits it, even those Ray starts from the environment a process began with.
        env = {**with_kept_bytecode(os.environ), leftovers.INSTANCE_VAR: leftovers.new_instance()}
        return subprocess.Popen(command, cwd=paths.root, env=env, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        os.close(log)


def wait_ready(paths: ServicePaths, process: subprocess.Popen[bytes], log_offset: int = 0,
               timeout_s: float = READY_TIMEOUT_S) -> dict[str, Any]:
    """Wait until the service answers. One that exits 0 found another holding
    ``service.lock`` (started outside this lock): that one is waited for instead."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if answer := ping(paths):
            return answer
        code = process.poll()
        if code not in (None, 0):
            raise ServiceUnavailable(f"the covey service could not start (exit status {code}): "
                                     f"{start_failure(paths, log_offset)}")
        time.sleep(POLL_S)
    end_tree(process.pid)  # it may be starting its Ray still: no half-started service is left behind
    raise ServiceUnavailable(f"the covey service did not answer within {timeout_s:.0f} s and was stopped: "
                             f"{start_failure(paths, log_offset)}")


def stop(paths: ServicePaths, timeout_s: float = STOP_TIMEOUT_S) -> int | None:
    """Stop the service and wait until its process is gone; its pid, or None if none ran."""
    answer = ask(paths, protocol.STOP)
    pid = answer.get("pid") if answer else None
    if pid is None:
        pid = _unanswering_service_pid(paths)
        if pid is None:
            return None
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)  # alive and covey's, but not answering (still starting, or stuck)
    deadline = time.monotonic() + timeout_s
    while pid_alive(pid):
        if time.monotonic() > deadline:
            raise ServiceUnavailable(f"the covey service (pid {pid}) is still running after {timeout_s:.0f} s; "
                                     f"its log: {paths.log}")
        time.sleep(POLL_S)
    return pid


def same_ray(wanted: str | None, served: dict[str, Any]) -> bool:
    """Whether a run that names Ray ``wanted`` (``--address`` / ``RAY_ADDRESS``) may run on the
    service whose ping answer is ``served``: the address it was started with (``address``:
    ``auto`` or ``HOST:PORT``) or the GCS address it is connected to
    (``ray_address``, ``HOST:PORT``; what Ray sets ``RAY_ADDRESS`` to in a job's driver).
    Compared as strings, ``localhost`` as ``127.0.0.1``; naming no Ray fits any service."""
    if not wanted:
        return True
    return _normal_address(wanted) in {_normal_address(served.get(key)) for key in ("address", "ray_address")} - {""}


def _normal_address(address: Any) -> str:
    if not isinstance(address, str):
        return ""
    scheme, sep, rest = address.strip().rstrip("/").lower().rpartition("://")
    host, colon, port = rest.rpartition(":")
    if colon and host == "localhost":
        rest = f"127.0.0.1:{port}"
    return f"{scheme}{sep}{rest}"


def read_info(paths: ServicePaths) -> dict[str, Any] | None:
    """``service.json``, or None when it is missing or not a JSON object (never deleted here)."""
    try:
        info = json.loads(paths.info.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def pid_alive(pid: int) -> bool:
    """Alive and not a zombie (a service this process started is reaped here)."""
    with contextlib.suppress(ChildProcessError, OSError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process has the pid now
    import psutil  # only here: the thin client does not pay for it on a run

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # gone since
        return False
    except psutil.AccessDenied:
        return True


def _unanswering_service_pid(paths: ServicePaths) -> int | None:
    info = read_info(paths) or {}
    pid = info.get("pid")
    if not isinstance(pid, int) or not pid_alive(pid):
        return None
    import psutil

    try:
        command = psutil.Process(pid).cmdline()
    except psutil.Error:  # gone, a zombie, or not ours to read
        return None
    return pid if any("covey.service" in argument for argument in command) else None


@contextlib.contextmanager
def _flock(path: Path) -> Iterator[None]:
    descriptor = open_private(path, os.O_RDWR)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock
