"""Shared helpers: the environment a run needs, statistics, machine facts, and this run's Ray processes.

Every Ray process this benchmark starts descends from the driver (``ray.init``
starts the GCS and the raylet, the raylet starts the workers), so counting
and measuring our own descendants never touches another run's Ray.
"""

from __future__ import annotations

import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

GIB = 1024 ** 3
MIB = 1024 ** 2


def prepare_env() -> Path:
    """A private temp dir, and the variables that keep Ray quiet, local and on loopback (set before Ray starts)."""
    tmp = Path(tempfile.mkdtemp(prefix="cvb-", dir="/tmp"))  # short: Ray's socket paths have a length limit
    (tmp / "ray").mkdir()
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ["RAY_TMPDIR"] = str(tmp / "ray")
    os.environ.pop("RAY_ADDRESS", None)
    # The figures of `covey -p` here are those of an in-process run on a private Ray (no covey service).
    os.environ.setdefault("COVEY_NO_SERVICE", "1")
    return tmp


def start_ray() -> None:
    import ray

    ray.init(
        include_dashboard=False, num_cpus=2, log_to_driver=False, namespace="covey",
        logging_level=logging.WARNING,
    )


def summary(values: Iterable[float], digits: int = 3) -> dict[str, Any]:
    """n, median (= p50), p90, min, max of a sample."""
    data = sorted(values)
    if not data:
        return {"n": 0}
    p90 = statistics.quantiles(data, n=10, method="inclusive")[8] if len(data) > 1 else data[0]
    return {
        "n": len(data), "p50": round(statistics.median(data), digits), "p90": round(p90, digits),
        "min": round(data[0], digits), "max": round(data[-1], digits),
    }


def machine() -> dict[str, Any]:
    import psutil
    import ray

    return {
        "cores": os.cpu_count(), "memory_gib": round(psutil.virtual_memory().total / GIB, 1),
        "python": platform.python_version(), "ray": ray.__version__, "platform": platform.platform(),
        "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


# -- our Ray processes ------------------------------------------------------------


def descendants() -> list[Any]:
    import psutil

    return psutil.Process().children(recursive=True)


def title(proc: Any) -> str:
    try:
        cmd = proc.cmdline()
        return cmd[0] if cmd else proc.name()
    except Exception:
        return ""


def actor_procs(cls_name: str = "_AgentActor") -> list[Any]:
    """Live worker processes whose title names this actor class (``ray::_AgentActor...``).

    While an agent actor runs a background agent, Ray titles its process with the
    running call's task name instead: ``ray::agent:<type>:<agent id>``."""
    prefixes = (f"ray::{cls_name}", "ray::agent:") if cls_name == "_AgentActor" else (f"ray::{cls_name}",)
    return [p for p in descendants() if title(p).startswith(prefixes)]


def worker_procs() -> list[Any]:
    """Every Ray worker (``ray::...`` title) under this driver, actors and idle workers alike."""
    return [p for p in descendants() if title(p).startswith("ray::")]


def open_fds(procs: Iterable[Any]) -> int:
    total = 0
    for p in procs:
        try:
            total += len(os.listdir(f"/proc/{p.pid}/fd"))
        except OSError:
            pass
    return total


def uss_mib(proc: Any) -> float | None:
    try:
        return proc.memory_full_info().uss / MIB
    except Exception:
        return None


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
