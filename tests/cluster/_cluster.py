"""A throwaway Ray cluster of ``ray start`` nodes on this machine, on loopback only.

Every process a node starts (gcs_server, raylet, dashboard, workers) inherits a
private tag in its environment, so the test finds *its* processes through
``/proc/<pid>/environ`` and stops them by pid. ``ray stop`` is never used: it
would stop every Ray on the machine, the pytest session's included.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

TAG_VAR = "COVEY_CLUSTER_TEST_TAG"
RAY_CLI = str(Path(sys.executable).with_name("ray"))


KEEP_LOOPBACK = """
import sys
import ray._private.services as services
services.resolve_ip_for_localhost = lambda host: host
from ray.scripts.scripts import main
sys.argv[0] = "ray"
main()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tagged_pids(tag: str) -> list[int]:
    """Live processes whose environment carries ``TAG_VAR=tag``."""
    needle = f"{TAG_VAR}={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and needle in environ.split(b"\0"):
            found.append(int(entry))
    return found


def pids_holding_files_under(folder: Path) -> list[int]:
    """Live processes (not zombies) with a file open under ``folder``."""
    prefix = str(folder).rstrip("/") + "/"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            targets = [os.readlink(f"/proc/{entry}/fd/{fd}") for fd in os.listdir(f"/proc/{entry}/fd")]
        except OSError:
            continue
        if any(target.startswith(prefix) for target in targets):
            found.append(int(entry))
    return found


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


class Node:
    def __init__(self, role: str, base: Path) -> None:
        self.role = role
        self.tag = f"{role}-{uuid.uuid4().hex[:12]}"
        self.tmpdir = Path(tempfile.mkdtemp(prefix=f"cv{role[0]}-", dir="/tmp"))  # short: socket paths
        self.output = ""

    def pids(self) -> list[int]:
        """The node's live processes: those carrying its tag, and those holding a file open under its
        temp dir (Ray's dashboard and runtime-env agents retitle themselves over their environment)."""
        return sorted(set(tagged_pids(self.tag)) | set(pids_holding_files_under(self.tmpdir)))

    def pids_named(self, name: str) -> list[int]:
        return [pid for pid in self.pids() if process_name(pid) == name]


class LocalCluster:
    """``head()`` then ``worker()``; ``stop()`` always (it is safe to call twice)."""

    def __init__(self, base: Path) -> None:
        self.base = Path(base)
        self.home = self.base / "home"  # Ray 2.60 keeps its auth token under ~/.ray
        self.home.mkdir(parents=True, exist_ok=True)
        self.nodes: list[Node] = []
        self.port: int | None = None
        self.dashboard_port: int | None = None
        self.no_dashboard: str | None = None
        """Why the head was started without its dashboard (None: it has one, or was not asked to)."""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def env(self, node: Node | None = None, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        # ...OSX_CLUSTER=0 would refuse to add a second node; RAY_AUTH_MODE (set by the shared
        # Ray's ray.init in this process) would make ``ray start`` demand a token under our HOME.
        for name in ("RAY_ADDRESS", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "PYTEST_CURRENT_TEST", "RAY_AUTH_MODE",
                     "RAY_CLIENT_MODE"):
            env.pop(name, None)
        env.update(HOME=str(self.home), RAY_USAGE_STATS_ENABLED="0", PYTHONUNBUFFERED="1")
        if node is not None:
            env.update({"RAY_TMPDIR": str(node.tmpdir), TAG_VAR: node.tag})
        env.update(extra)
        return env

    def _start(self, node: Node, args: list[str], timeout_s: float = 180) -> Node:
        self.nodes.append(node)  # before starting: stop() must find it even if start fails
        # The dashboard agent's HTTP port defaults to 52365 for every node: another Ray on this
        # machine may hold it (then jobs fail with "No available agent to submit job").
        args = ["start", *args, "--node-ip-address", "127.0.0.1", "--disable-usage-stats",
                "--dashboard-agent-listen-port", str(free_port())]
        if node.role == "head":
            # With this at 0, ``ray start`` keeps 127.0.0.1 (otherwise it swaps in the network card's address).
            command, env = [RAY_CLI, *args], self.env(node, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
        else:
            # ...but at 0 it refuses to add a node, and at 1 it rewrites 127.0.0.1: keep the address as given.
            command, env = [sys.executable, "-c", KEEP_LOOPBACK, *args], self.env(node, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="1")
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s)
        node.output = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise RuntimeError(f"ray start ({node.role}) failed:\n{node.output[-3000:]}")
        return node

    def head(self, *, dashboard: bool = False) -> Node:
        self.port = free_port()
        args = ["--head", "--port", str(self.port), "--num-cpus", "1", "--resources", json.dumps({"head_node": 1})]
        if dashboard:
            self.dashboard_port = free_port()
            args += ["--include-dashboard=true", "--dashboard-host", "127.0.0.1",
                     "--dashboard-port", str(self.dashboard_port)]
        else:
            args += ["--include-dashboard=false"]
        return self._start(Node("head", self.base), args)

    def worker(self) -> Node:
        # A fake GPU (``ray start`` refuses "GPU" in --resources): a definition asking for
        # num_gpus lands here (tests/cluster/test_agent_resources.py).
        args = ["--address", self.address, "--num-cpus", "1", "--num-gpus", "1", "--resources",
                json.dumps({"worker_node": 1})]
        return self._start(Node("worker", self.base), args)

    def kill_node(self, node: Node) -> list[int]:
        """Crash a node: SIGKILL its raylet (its workers die with it), then the rest of its processes."""
        raylets = node.pids_named("raylet")
        for pid in raylets:
            _signal(pid, signal.SIGKILL)
        return raylets

    def stop(self, timeout_s: float = 3) -> list[int]:
        """Stop every process of every node, workers first; return any pid still alive."""
        for node in reversed(self.nodes):
            for pid in node.pids():
                _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and any(n.pids() for n in self.nodes):
            time.sleep(0.2)
        for node in self.nodes:
            for pid in node.pids():
                _signal(pid, signal.SIGKILL)
        time.sleep(0.5)
        left = [pid for node in self.nodes for pid in node.pids()]
        if not left:
            for node in self.nodes:
                shutil.rmtree(node.tmpdir, ignore_errors=True)
        return left


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_python(code: str, env: dict[str, str], timeout_s: float, cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout_s)


def marked_json(output: str, marker: str) -> dict:
    """The JSON object printed on the line that starts with ``marker``."""
    for line in output.splitlines():
        if line.startswith(marker):
            return json.loads(line[len(marker):])
    raise AssertionError(f"no {marker!r} line in the output:\n{output[-4000:]}")


__all__ = ["LocalCluster", "Node", "free_port", "marked_json", "process_name", "run_python", "tagged_pids"]
