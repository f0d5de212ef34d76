"""``covey start``, ``covey stop`` and ``covey status``: the service's lifecycle as commands,
and the status as a person reads it. Plain Python: the ``covey`` command imports it."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from covey.client import ports as protocol
from covey.client.paths import service_paths
from covey.client.process import ask, ensure_service, same_ray, starting_line, stop
from covey.observe.tables import table_lines
from covey.ray import local as local_rays
from covey.ray import own_ray


def start_command(address: str | None, idle_timeout_s: float | None, dashboard: bool = False) -> int:
    paths = service_paths()
    if dashboard and (refused := _dashboard_refused(address)):
        print(f"covey: {refused}", file=sys.stderr)
        return 1

    def say_starting() -> None:
        if sys.stderr.isatty():
            print(starting_line(paths, address), file=sys.stderr, flush=True)

    answer, started = ensure_service(paths, address=address, idle_timeout_s=idle_timeout_s, before_start=say_starting,
                                     dashboard=dashboard)
    state = "started" if started else "already running"
    print(f"covey service {state}: pid {answer.get('pid')}, Ray {answer.get('ray_address')}")
    if answer.get("dashboard"):
        print(f"  Ray dashboard {answer['dashboard']}")
    if answer.get("ray_address"):
        print(f"  Ray's CLI: {ray_cli_exports(answer['ray_address'])}")
    print(f"  socket {paths.socket}\n  log    {paths.log}")
    if not started and not same_ray(address, answer):
        print(f"covey: it serves Ray {answer.get('address') or 'local'}, not {address}: "
              f"`covey stop` first to change it", file=sys.stderr)
        return 1
    if dashboard and not answer.get("dashboard"):
        print("covey: its Ray runs without Ray's dashboard: `covey stop`, then `covey start --dashboard`",
              file=sys.stderr)
        return 1
    return 0


def ray_cli_exports(ray_address: str) -> str:
    """The shell line after which Ray's own commands (``ray status``, ``ray list actors``, ``ray job
    submit``) reach this Ray with no flags. Ray 2.60's CLI sends the token it finds in
    ``~/.ray/auth_token`` only when ``RAY_AUTH_MODE=token``, and it swaps 127.0.0.1 for the
    machine's network address, where a Ray on loopback does not listen, unless
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``."""
    exports = [f"RAY_ADDRESS={ray_address}"]
    if os.environ.get("RAY_AUTH_MODE", "token").lower() == "token":
        exports.append("RAY_AUTH_MODE=token")
    if ray_address.rsplit(":", 1)[0] in ("127.0.0.1", "localhost"):
        exports.append("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0")
    return "export " + " ".join(exports)


def _dashboard_refused(address: str | None) -> str | None:
    """Why ``covey start --dashboard`` cannot give a dashboard, or None."""
    if address or os.environ.get("RAY_ADDRESS"):
        return ("--dashboard starts the service's own Ray with Ray's dashboard; a cluster you name has its "
                "head's (`ray start --head --include-dashboard=true`)")
    return own_ray.dashboard_missing()


def stop_command() -> int:
    paths = service_paths()
    pid = stop(paths)
    if pid is None:
        print("covey: no covey service is running")
    else:
        print(f"covey: stopped the covey service (pid {pid})")
    # A service that died left its Ray (and the sessions in it) running: stopping means that too.
    if (left := own_ray.find(paths)) is not None:
        own_ray.stop(left, paths)
        local_rays.forget(left.pid)
        print(f"covey: stopped the Ray a covey service left running (pid {left.pid}) and its sessions")
    return 0


def status_command(as_json: bool = False) -> int:
    paths = service_paths()
    status = ask(paths, protocol.STATUS, timeout_s=30.0)
    if status is None:
        print("covey: no covey service is running", file=sys.stderr)
        return 1
    print(json.dumps(status, indent=2) if as_json else status_text(status))
    return 0


def status_text(status: dict[str, Any]) -> str:
    sessions = status.get("sessions", [])
    lines = [
        f"covey service: pid {status['pid']}, up {_duration(status['uptime_s'])}, covey {status.get('version')}",
        f"  Ray       {status.get('ray_address')} ({'started by the service' if status.get('started_ray') else 'joined'})",
        *([f"  dashboard {status['dashboard']} (Ray's)"] if status.get("dashboard") else []),
        *([f"  Ray CLI   {ray_cli_exports(status['ray_address'])}"] if status.get("ray_address") else []),
        f"  sessions  {len(sessions)} running",
        *table_lines([[s["session_id"], s["cwd"], f"client pid {s.get('client_pid')}", _duration(s["running_s"])]
                      for s in sessions], ("bold",), indent=4),
        f"  idle      {_duration(status['idle_s'])} (exits after {_duration(status['idle_timeout_s'])} idle)",
    ]
    if pool := status.get("pool"):
        lines += _pool_lines(pool)
    lines += [_rate_line(state, time.time()) for state in status.get("rate_limits") or []]
    if procs := status.get("processes"):
        lines.append(f"  memory    RSS {procs['rss_mib']:.0f} MiB, USS {procs['uss_mib']:.0f} MiB "
                     f"in {procs['count']} processes (the service and its descendants)")
        lines.append(f"  CPU       {procs['cpu_percent']:.1f} % of one core over {procs['sample_s']} s, "
                     f"{procs['cpu_s']:.1f} s in all")
    lines += [f"  socket    {status.get('socket')}", f"  log       {status.get('log')}"]
    return "\n".join(lines)


def _rate_line(state: dict[str, Any], now: float) -> str:
    """One rate scheduler (an API identity's): its queue, and each bucket the API or settings told it of."""
    parts = state["identity"].split("|")  # base URL | credential hash | model class
    who = f"{parts[-1]} at {parts[0]}"
    buckets = "; ".join(
        f"{name.replace('_', ' ')} {figures['remaining']:.0f}/{figures['limit']:.0f} left"
        + (f", full in {max(figures['resets_at'] - now, 0):.0f} s" if figures.get("resets_at") else "")
        for name, figures in sorted(state.get("buckets", {}).items()))
    paused = f", paused {max(state['paused_until'] - now, 0):.0f} s (retry-after)" if state.get("paused_until") else ""
    lent = f", {state['leases']} lent to gateways" if state.get("leases") else ""
    return (f"  rate      {who}: {state['queued']} waiting, {state['in_flight']} in flight{lent}{paused}"
            + (f"; {buckets}" if buckets else "; no limit known yet"))


def _pool_lines(pool: dict[str, Any]) -> list[str]:
    """The shared pool, a line per lane: agent actors ("home", "any") and session kits ("kit")."""
    names = {"home": "agents", "any": "agents (any node)", "kit": "session kits"}
    lines = []
    for lane, figures in pool.items():
        if not isinstance(figures, dict):
            continue
        lines.append(
            f"  pool      {names.get(lane, lane)}: {figures['ready']} ready, {figures['lent']} lent, "
            f"{figures['starting']} starting; keeps {figures['target']} (floor {figures['floor']}, "
            f"demand {figures['demand']:g}), high-water {figures['high_water']}, lent {figures.get('loans', 0)} times")
    if "created" in pool:
        lines.append(f"            {pool['created']} created since the service started")
    return lines


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes} min {seconds} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"
