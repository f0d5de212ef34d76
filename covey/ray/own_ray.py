"""The service's own local Ray: a ``ray start --head --block`` process in a session of its own.

A Ray that ``ray.init`` starts shares its driver's fate: kill -9 the service and its GCS
and raylet go too, with every session in them. So the service starts its Ray as Ray's own
command does, apart from itself, and joins it: a service that dies leaves its Ray (and
the sessions running in it) alive, and the next service finds it through ``ray.json`` in
the service directory and joins it instead of starting another. ``stop`` ends it: SIGTERM
to the ``ray start --block`` process, which stops every process of that Ray (Ray's own
rule for ``--block``), then SIGKILL if it lingers. Loopback only: the head binds 127.0.0.1
(``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, as ``covey.ray.cluster.stay_on_loopback``); its
sessions are kept in the user's private Ray folder (``covey.ray.start.ray_temp_dir``). Ray's API
server listens on 127.0.0.1 at a port of its own; with ``dashboard`` it is Ray's whole dashboard
(the UI, the job and state APIs), which needs ``ray[default]`` (``dashboard_missing``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import random
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import psutil

from covey.common.private_dirs import open_private
from covey.common.subprocess_env import without_api_credentials
from covey.errors import CoveyError
from covey.ray import local as local_rays
from covey.ray import token as ray_token
from covey.ray.start import ray_temp_dir

log = logging.getLogger(__name__)

START_TIMEOUT_S = 90.0
AGENT_PORT_FLAGS = ("--dashboard-agent-listen-port", "--dashboard-agent-grpc-port", "--metrics-export-port",
                    "--runtime-env-agent-port")
STOP_GRACE_S = 0.5


class ServiceFolder(Protocol):
    """The service's folder as this module needs it: where ``ray.json`` and the log go."""

    @property
    def root(self) -> Path: ...

    @property
    def log(self) -> Path: ...


@dataclass(frozen=True)
class OwnRay:
    pid: int
    """The ``ray start --block`` process: stopping it stops that Ray."""
    pid_started: str | None
    """Its start time (``local_rays.started_at``): a reused pid is not it."""
    address: str
    """The GCS address, ``127.0.0.1:<port>``."""
    dashboard: str | None = None
    """Ray's dashboard (``http://127.0.0.1:<port>``: its UI, the job and state APIs) when it was
    started with one (``covey start --dashboard``); None without."""

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except OSError:
            return False
        return self.pid_started is None or local_rays.started_at(self.pid) == self.pid_started


def ray_file(paths: ServiceFolder) -> Path:
    return paths.root / "ray.json"


def find(paths: ServiceFolder) -> OwnRay | None:
    """The Ray a service of this directory started, if its process still runs and its GCS answers."""
    try:
        own = OwnRay(**json.loads(ray_file(paths).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if own.alive() and _answers(own.address, 2.0):
        return own
    return None


@dataclass(frozen=True)
class RayStarting:
    """A ``ray start`` on its way: its process, and the Ray it will be."""

    process: subprocess.Popen[bytes]
    own: OwnRay


def start(paths: ServiceFolder, num_cpus: int | None = None, dashboard: bool = False) -> OwnRay:
    """Start a head node on 127.0.0.1 in a process session of its own; wait until its GCS answers."""
    return wait_up(launch(paths, num_cpus, dashboard), paths)


DASHBOARD_DEPENDENCIES = ("aiohttp", "aiohttp_cors", "grpc", "opencensus", "opentelemetry.exporter.prometheus",
                          "prometheus_client")
"""What Ray's dashboard imports beyond plain ``ray`` (``ray.dashboard.optional_deps``): ``ray[default]``."""


def dashboard_missing() -> str | None:
    """Why Ray's dashboard cannot start here (one line naming what to install), or None. Looked up
    without importing anything: the ``covey`` command does not import Ray."""
    for name in DASHBOARD_DEPENDENCIES:
        try:
            found = importlib.util.find_spec(name) is not None
        except ImportError:  # a parent package is missing
            found = False
        if not found:
            return (f"Ray's dashboard needs `ray[default]` ({name} is not installed): "
                    f"pip install 'ray[default]=={_ray_version()}'")
    return None


def _ray_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ray")
    except PackageNotFoundError:
        return "VERSION"


def launch(paths: ServiceFolder, num_cpus: int | None = None, dashboard: bool = False) -> RayStarting:
    """Start ``ray start`` and return at once: the service imports Ray and its runtime meanwhile
    (a second of CPU that would otherwise come after Ray's own start). ``dashboard``: with Ray's
    dashboard on 127.0.0.1 (its UI, the job and state APIs: ``ray job submit``, ``ray list``)."""
    taken: set[int] = set()  # each of the node's ports a different one: Ray refuses a port given twice
    port = _free_port(taken)
    command = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block",
               "--node-ip-address", "127.0.0.1", "--port", str(port), "--disable-usage-stats",
               # Not started: the log monitor (it sends workers' output to drivers, and the service
               # joins with log_to_driver off). The autoscaler's monitor stays: `ray status` reads it.
               "--include-log-monitor=false"]
    # Ports of their own for the node's agents: with Ray's default (0, the agent picks one), the
    # raylet waits for the dashboard agent to start and report its ports before the node counts as
    # up: 4-5 s of a cold start here, against about 1.5 s with the ports given.
    for flag in AGENT_PORT_FLAGS:
        command += [flag, str(_free_port(taken))]
    # Without the dashboard Ray still runs its API server, with only its usage-stats module (no jobs, no
    # state API), and on Ray's default port 8265 unless told: where another user's Ray may serve, and Ray's
    # CLI, finding that address in this Ray, would send this user's token. A port of its own either way.
    api_port = _free_port(taken)
    command += [f"--include-dashboard={'true' if dashboard else 'false'}", "--dashboard-host", "127.0.0.1",
                "--dashboard-port", str(api_port)]
    dashboard_url = f"http://127.0.0.1:{api_port}" if dashboard else None
    if _has_ray_client():
        # Ray starts its client server whenever ``ray[client]`` is installed, on 10001 unless told:
        # a port of its own keeps two users' services apart. Without it (``pip install ray``, covey's
        # base install) Ray refuses the flag, and no client server is wanted.
        command += ["--ray-client-server-port", str(_free_port(taken))]
    if num_cpus is not None:
        command += ["--num-cpus", str(num_cpus)]
    if (temp_dir := ray_temp_dir()) is not None:
        # A folder of this user's own, not a shared /tmp/ray (whose ray_current_cluster would name this Ray
        # to every local ray.init); a RAY_TMPDIR the user set is Ray's to use.
        command += ["--temp-dir", temp_dir]
    # Without the API's credentials: every worker of this Ray starts from the raylet's environment.
    env = {**without_api_credentials(os.environ), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
           "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    ray_token.prepare_token()
    with open(paths.log, "ab") as log_file:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
                                   env=env, start_new_session=True)
    return RayStarting(process, OwnRay(process.pid, local_rays.started_at(process.pid), f"127.0.0.1:{port}",
                                       dashboard_url))


def wait_up(launched: RayStarting, paths: ServiceFolder) -> OwnRay:
    """Wait until the launched Ray's GCS answers; record it in ``ray.json``."""
    process, own = launched.process, launched.own
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _answers(own.address, 0.5):
        if process.poll() is not None:
            raise CoveyError(f"`ray start` exited with {process.returncode} before its Ray answered; "
                             f"see {paths.log}")
        if time.monotonic() > deadline:
            stop(own)
            raise CoveyError(f"the covey service's Ray did not answer within {START_TIMEOUT_S:g} s; see {paths.log}")
        time.sleep(0.1)
    descriptor = open_private(ray_file(paths), os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(asdict(own), handle)
    return own


def stop(own: OwnRay, paths: ServiceFolder | None = None) -> bool:
    """End that Ray; True if its ``ray start`` process is gone.

    Every process of its process session gets SIGTERM at once (the ``ray start`` process leads
    the session; Ray gives each worker a process group of its own, in the same session), and
    what is left after ``STOP_GRACE_S`` gets SIGKILL (most of Ray's processes, their GCS gone,
    would wait seconds more: nothing of this Ray is kept). Ray's own SIGTERM path would drain the
    node, then stop its processes one after another, waiting on each: over 10 s here, for a
    Ray that serves nobody else."""
    members = _session_members(own.pid) if own.alive() else []
    for process in members:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, left = psutil.wait_procs(members, timeout=STOP_GRACE_S)
    if left:
        log.info("the service's Ray: %d of its %d processes still ran %g s after SIGTERM: killed",
                 len(left), len(members), STOP_GRACE_S)
        for process in left:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(left, timeout=STOP_GRACE_S)
    if paths is not None:
        ray_file(paths).unlink(missing_ok=True)
    return not own.alive()


def abandon(own: OwnRay, paths: ServiceFolder) -> None:
    """A service whose start failed after it started this Ray leaves it: the driver leaves, then
    the Ray stops, and its ``covey ps`` record goes."""
    import ray  # only here: the service imports this module before it may import Ray

    with contextlib.suppress(Exception):
        ray.shutdown()
    stop(own, paths)
    local_rays.forget(own.pid)


def _session_members(leader: int) -> list[psutil.Process]:
    """The leader and every live process in its process session."""
    members = []
    for process in psutil.process_iter():
        with contextlib.suppress(OSError, psutil.Error):
            if process.pid == leader or os.getsid(process.pid) == leader:
                members.append(process)
    return members


def _has_ray_client() -> bool:
    """Whether Ray's client extra (grpc) is installed: Ray's own test, without importing it."""
    return importlib.util.find_spec("grpc") is not None


def _answers(address: str, timeout_s: float) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return True
    except OSError:
        return False


def _free_port(taken: set[int]) -> int:
    """A port free now and not in ``taken`` (it is added there), outside the range the kernel hands
    out for outgoing connections and ``bind(0)``: between this check and Ray binding it (a second or
    two), another process's connection could otherwise take it, and the node would fail to start.
    Below that range, and above Ray's worker ports (10002-19999)."""
    low, high = _ephemeral_range()
    for _ in range(64):
        port = random.randrange(20_000, 32_768)
        if low <= port <= high or port in taken:
            continue
        with socket.socket() as sock, contextlib.suppress(OSError):
            sock.bind(("127.0.0.1", port))
            taken.add(port)
            return port
    while True:  # a crowded range: the kernel's choice, as before
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            if (port := int(sock.getsockname()[1])) not in taken:
                taken.add(port)
                return port


IANA_EPHEMERAL = (49_152, 65_535)
"""The ephemeral ports IANA sets aside, where the system names no range of its own."""


def _ephemeral_range() -> tuple[int, int]:
    """The kernel's range for ephemeral ports: Linux's ``/proc`` file, macOS's and the BSDs'
    ``sysctl``, else IANA's range."""
    try:
        if sys.platform.startswith("linux"):
            text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        else:
            text = subprocess.run(["sysctl", "-n", "net.inet.ip.portrange.first", "net.inet.ip.portrange.last"],
                                  capture_output=True, text=True, timeout=5, check=True).stdout
        low, high = text.split()
        return int(low), int(high)
    except (OSError, ValueError, subprocess.SubprocessError):
        return IANA_EPHEMERAL
