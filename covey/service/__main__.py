"""``python -m covey.service [--address A] [--idle-timeout S] [--dashboard]``: the covey service process.

Clients start it detached (``covey.client.process.spawn``); ``covey start`` does too.
It takes ``service.lock`` before anything slow: if another service holds the lock and
answers, this one exits 0; one that holds it without answering is still starting or
stopping, and is waited for.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import time

from covey.client import leftovers
from covey.client.paths import ServicePaths, open_private, service_paths
from covey.client.process import ping, read_info
from covey.common.subprocess_env import forget_api_credentials_in_proc
from covey.ray import own_ray
from covey.service import logfile

DEFAULT_IDLE_TIMEOUT_S = 600.0
LOCK_WAIT_S = 30.0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    os.umask(0o077)  # every file the service and its Ray create is the user's alone
    # The key its first client had, if any, is not shown in /proc/<pid>/environ (each run brings
    # its own; the service reads its environment from os.environ, a copy).
    forget_api_credentials_in_proc()
    paths = service_paths()
    lock = _take_lock(paths)
    if lock is None:
        print(f"covey service: another one runs (pid {_holder(paths)}); this one leaves", flush=True)
        return 0
    logfile.log_to(paths.log)  # turned over by size, stdout and stderr along
    # The lock is ours, so the service that wrote service.json last is dead. If its own Ray still
    # runs, the sessions in it go on: this service joins it and keeps its mark. Else what it left
    # runs no more.
    last = read_info(paths) or {}
    found = own_ray.find(paths)
    if found is not None and last.get("instance"):
        os.environ[leftovers.INSTANCE_VAR] = last["instance"]
    else:
        leftovers.reap(last.get("instance"), last.get("ray_session_dir"))
    # The mark its starter gave it (lifecycle.spawn), else one of its own, before Ray starts.
    os.environ.setdefault(leftovers.INSTANCE_VAR, leftovers.new_instance())
    address = args.address or os.environ.get("RAY_ADDRESS")
    # Its own Ray starts now, while Ray and covey's runtime are imported below.
    launched = own_ray.launch(paths, dashboard=args.dashboard) if not address and found is None else None
    try:
        from covey.service.server import Service  # only once the lock is ours
    except BaseException:
        if launched is not None:
            own_ray.stop(launched.own, paths)
        raise
    idle = args.idle_timeout if args.idle_timeout is not None else _env_idle_timeout()
    asyncio.run(Service(paths, address=address, idle_timeout_s=idle, launched=launched).serve())
    os.close(lock)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m covey.service", description="The covey service.")
    parser.add_argument("--address", help="the Ray cluster to serve runs on (default RAY_ADDRESS, else a local Ray)")
    parser.add_argument("--idle-timeout", type=float, metavar="S",
                        help=f"exit after S seconds without a run (default COVEY_IDLE_TIMEOUT_S or {DEFAULT_IDLE_TIMEOUT_S:g})")
    parser.add_argument("--dashboard", action="store_true",
                        help="start its own Ray with Ray's dashboard on 127.0.0.1 (the job and state APIs too)")
    return parser


def _env_idle_timeout() -> float:
    value = os.environ.get("COVEY_IDLE_TIMEOUT_S")
    try:
        return float(value) if value else DEFAULT_IDLE_TIMEOUT_S
    except ValueError:
        print(f"covey service: COVEY_IDLE_TIMEOUT_S={value!r} is not a number; using {DEFAULT_IDLE_TIMEOUT_S:g}",
              flush=True)
        return DEFAULT_IDLE_TIMEOUT_S


def _take_lock(paths: ServicePaths) -> int | None:
    """``service.lock``'s descriptor, held until this process exits; None if another service answers."""
    descriptor = open_private(paths.lock, os.O_RDWR)
    deadline = time.monotonic() + LOCK_WAIT_S
    while time.monotonic() < deadline:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if ping(paths) is not None:
                break
            time.sleep(0.1)  # the holder is starting or stopping
            continue
        os.ftruncate(descriptor, 0)
        os.write(descriptor, str(os.getpid()).encode())
        return descriptor
    os.close(descriptor)
    return None


def _holder(paths: ServicePaths) -> str:
    try:
        return paths.lock.read_text().strip() or "?"
    except OSError:
        return "?"


if __name__ == "__main__":
    raise SystemExit(main())
