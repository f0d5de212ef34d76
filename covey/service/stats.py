"""Memory and CPU of the covey service's processes: the service and every descendant
(the Ray it started: GCS, raylet, workers and the agent actors in them)."""

from __future__ import annotations

import os
import time
from typing import Any

import psutil

MIB = 1024 ** 2


def process_figures(pid: int | None = None, sample_s: float = 0.5) -> dict[str, Any]:
    """RSS and USS summed, and CPU as a percentage of one core over ``sample_s`` (blocking)."""
    root = psutil.Process(pid or os.getpid())
    procs = [root, *root.children(recursive=True)]
    for proc in procs:
        _quiet(proc.cpu_percent, None)  # the first call starts the interval
    time.sleep(sample_s)
    cpu_percent = rss = uss = cpu_s = 0.0
    counted = 0
    for proc in procs:
        try:
            with proc.oneshot():
                cpu_percent += proc.cpu_percent(None)
                times = proc.cpu_times()
                cpu_s += times.user + times.system
                memory = proc.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        rss, uss, counted = rss + memory.rss, uss + memory.uss, counted + 1
    return {"count": counted, "rss_mib": round(rss / MIB, 1), "uss_mib": round(uss / MIB, 1),
            "cpu_percent": round(cpu_percent, 2), "cpu_s": round(cpu_s, 2), "sample_s": sample_s}


def _quiet(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        pass
