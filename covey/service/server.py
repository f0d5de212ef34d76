"""The covey service process: an asyncio Unix-socket server that is the Ray driver of
every run it serves.

It starts or joins Ray once, listens on ``service.sock`` (0600, in the 0700 service
directory), writes ``service.json``, and serves many clients at once, each run its
own Session. It stops after ``idle_timeout_s`` without a run, on ``covey_stop``, or
on SIGTERM / SIGINT: it stops its sessions' agents, shuts down the Ray it started,
removes the socket and ``service.json``, and exits. ``main`` takes ``service.lock``
first (``covey.service.__main__``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import struct
import time
from importlib import metadata
from typing import Any, Awaitable, Callable

import ray

from covey import local_rays
from covey.actors.shared_pool import SharedPoolHandle, pool_name
from covey.ray_runtime import ensure_ray, shutdown_if_started
from covey.daemon import protocol
from covey.daemon.leftovers import INSTANCE_VAR
from covey.daemon.lifecycle import same_ray
from covey.daemon.paths import ServicePaths, open_private
from covey.service.conversation import ConversationRun
from covey.service.runs import ServedRun
from covey.service.stats import process_figures

log = logging.getLogger(__name__)

STOP_RUNS_S = 30.0
"""How long stopping waits for the runs' agents to stop (their grace is 5 s, 10 s for the registry's)."""

SERVICE_PRELOAD = ("covey.model.anthropic",)
"""What the pool's agent actors load before they are lent, besides covey's own run modules:
the Messages-API adapter most runs use (a scripted run's model needs nothing more)."""

StatsProvider = Callable[[], "dict[str, Any] | Awaitable[dict[str, Any]]"]


class Service:
    def __init__(self, paths: ServicePaths, *, address: str | None, idle_timeout_s: float,
                 pool_stats: StatsProvider | None = None) -> None:
        self.paths, self.address, self.idle_timeout_s = paths, address, idle_timeout_s
        self.pool: SharedPoolHandle | None = None
        """The shared warm pool every served session borrows from (agent actors, session kits)."""
        self.pool_stats = pool_stats
        """Figures of the shared warm pool for ``covey status`` (ready, size, high-water): the pool's own by default."""
        self.runs: set[ServedRun] = set()
        self.started_at = time.time()
        self.idle_since = time.monotonic()
        self.started_ray = False
        self.ray_address = ""
        self._stopping = asyncio.Event()
        self._runs_changed = asyncio.Event()

    async def serve(self) -> None:
        self._stopping, self._runs_changed = asyncio.Event(), asyncio.Event()  # this loop's, not a stop before serve
        started = time.monotonic()
        self.started_ray = ensure_ray(self.address)
        self.ray_address = ray.get_runtime_context().gcs_address
        log.info("Ray %s in %.1f s", "started" if self.started_ray else "joined", time.monotonic() - started)
        pool = self.pool = SharedPoolHandle.create(pool_name(), ray.get_runtime_context().get_node_id(),
                                                   preload=SERVICE_PRELOAD)
        self.pool_stats = self.pool_stats or pool.stats
        # Floors start now; the first run waits only for what it takes (a kit, its main agent).
        floors = asyncio.create_task(self._floors_ready(pool))
        loop = asyncio.get_running_loop()
        # After ray.init: a Ray driver installs its own SIGTERM handler (exit, no cleanup).
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.stop, f"signal {signal.Signals(signum).name}")
        self.paths.socket.unlink(missing_ok=True)  # stale: this process holds service.lock
        server = await asyncio.start_unix_server(self._client, path=str(self.paths.socket), limit=protocol.LINE_LIMIT)
        os.chmod(self.paths.socket, 0o600)
        self._write_info()
        self.idle_since = time.monotonic()  # idle from now, not from before Ray started
        log.info("covey service pid %d serving on %s (Ray %s)", os.getpid(), self.paths.socket, self.ray_address)
        idle = asyncio.create_task(self._idle_watch())
        try:
            await self._stopping.wait()
        finally:
            idle.cancel()
            floors.cancel()
            await self._shut_down(server)

    async def _floors_ready(self, pool: SharedPoolHandle) -> None:
        started = time.monotonic()
        stats = await pool.ready()
        log.info("the shared pool's floors are ready after %.1f s: %s", time.monotonic() - started, stats)

    def stop(self, why: str) -> None:
        if not self._stopping.is_set():
            log.info("stopping: %s", why)
            self._stopping.set()

    async def _shut_down(self, server: asyncio.AbstractServer) -> None:
        # No new client from here on; the runs' own connections stay open to be told.
        server.close()
        self.paths.socket.unlink(missing_ok=True)
        for run in list(self.runs):
            run.cancel("service stopping")
        deadline = time.monotonic() + STOP_RUNS_S
        while self.runs and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if self.pool is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.pool.shutdown(), 10)
            self.pool.kill()
        shutdown_if_started(self.started_ray)
        self.paths.info.unlink(missing_ok=True)
        log.info("covey service pid %d stopped", os.getpid())

    async def _idle_watch(self) -> None:
        """Sleeps until the idle timeout would pass, or until a run starts or ends: an idle
        service wakes once per timeout at most."""
        while True:
            left = None if self.runs else self.idle_since + self.idle_timeout_s - time.monotonic()
            if left is not None and left <= 0:
                if await self._attached_sessions():
                    self.idle_since = time.monotonic()  # a Python session on this service still runs
                    continue
                self.stop(f"idle for {self.idle_timeout_s:g} s")
                return
            self._runs_changed.clear()
            try:
                await asyncio.wait_for(self._runs_changed.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def _attached_sessions(self) -> int:
        """Sessions of other drivers (``Session(service=True)``) holding one of the pool's kits."""
        if self.pool is None:
            return 0
        try:
            kits = (await self.pool.stats()).get("kit")
            return int(kits.get("lent", 0)) if isinstance(kits, dict) else 0
        except Exception:  # the pool is gone: nothing holds the service
            return 0

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        pid, uid = _peer(writer)
        try:
            if uid is not None and uid != os.getuid():
                log.warning("refused a client of uid %s", uid)
                return
            line = await reader.readline()
            if line:
                await self._answer(protocol.decode(line), reader, writer, pid)
        except ValueError as exc:  # a line over LINE_LIMIT (asyncio's readline), or not JSON (ProtocolError)
            log.warning("a client connection failed: %s", exc)
            with contextlib.suppress(ConnectionError):
                writer.write(protocol.encode(protocol.error("", f"refused: {exc}")))
        except ConnectionError as exc:
            log.warning("a client connection failed: %s", exc)
        except asyncio.CancelledError:
            pass  # the service is exiting: the client sees the connection close
        finally:
            writer.close()

    async def _answer(self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      client_pid: int | None) -> None:
        request_id = message.get("request_id", "")
        match protocol.subtype_of(message):
            case protocol.PING:
                reply = protocol.success(request_id, self._identity())
            case protocol.STATUS:
                reply = protocol.success(request_id, await self.status())
            case protocol.STOP:
                reply = protocol.success(request_id, {"pid": os.getpid()})
                self.stop("covey stop")
            case protocol.RUN:
                await self._serve_run(message, reader, writer, client_pid)
                return
            case other:
                reply = protocol.error(request_id, f"unknown request {other!r}")
        writer.write(protocol.encode(reply))
        await writer.drain()

    async def _serve_run(self, message: dict[str, Any], reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter, client_pid: int | None) -> None:
        if self._stopping.is_set():
            return
        conversation = bool((message.get("request", {}).get("run") or {}).get("conversation"))
        kind = ConversationRun if conversation else ServedRun
        run = kind(message, reader, writer, check=self._refusal, client_pid=client_pid)
        self.runs.add(run)
        self._runs_changed.set()
        log.info("run for client pid %s in %s", client_pid, run.cwd)
        try:
            await run.serve()
        finally:
            self.runs.discard(run)
            if not self.runs:
                self.idle_since = time.monotonic()
            self._runs_changed.set()
            log.info("run for client pid %s ended (%s)", client_pid, run.why_cancelled or "finished")

    def _refusal(self, request: dict[str, Any]) -> str | None:
        """Why this service cannot serve the run, if it cannot (another Ray asked for)."""
        wanted = (request.get("options") or {}).get("address")
        if not same_ray(wanted, self._identity()):
            return (f"the covey service runs on Ray {self.address or self.ray_address}, not {wanted}: "
                    f"run `covey stop`, then `covey start --address {wanted}` (or run with --no-service)")
        return None

    def _identity(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "version": _version(), "ray_address": self.ray_address, "address": self.address}

    async def status(self) -> dict[str, Any]:
        now = time.time()
        status = {
            **self._identity(), "started_at": self.started_at, "uptime_s": round(now - self.started_at, 1),
            "started_ray": self.started_ray, "socket": str(self.paths.socket), "log": str(self.paths.log),
            "idle_timeout_s": self.idle_timeout_s,
            "idle_s": 0.0 if self.runs else round(time.monotonic() - self.idle_since, 1),
            "sessions": [{"session_id": run.session.session_id if run.session else None, "cwd": run.cwd,
                          "client_pid": run.client_pid, "running_s": round(now - run.started_at, 1)}
                         for run in self.runs],
            "processes": await asyncio.to_thread(process_figures),
        }
        if self.pool_stats is not None:
            figures = self.pool_stats()
            status["pool"] = await figures if asyncio.iscoroutine(figures) else figures
        if ray.is_initialized():
            from covey.actors.ratelimit import scheduler_states  # loads the model's scheduler: only here

            status["rate_limits"] = await scheduler_states()
        return status

    def _write_info(self) -> None:
        info = {"pid": os.getpid(), "instance": os.environ.get(INSTANCE_VAR), "started_at": self.started_at,
                "ray_address": self.ray_address, "ray_session_dir": _own_ray_session_dir(),
                "address": self.address, "idle_timeout_s": self.idle_timeout_s, "version": _version(),
                "socket": str(self.paths.socket)}
        partial = self.paths.info.with_suffix(".json.partial")
        descriptor = open_private(partial, os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(info, handle)
        os.replace(partial, self.paths.info)  # readers never see half a file


def _own_ray_session_dir() -> str | None:
    """The session directory of the Ray this service started (``covey.local_rays`` records
    it), which names every process of that Ray on its command line; None for a joined Ray."""
    entry = next((ray_ for ray_ in local_rays.live() if ray_.pid == os.getpid()), None)
    return entry.session_dir if entry else None


def _peer(writer: asyncio.StreamWriter) -> tuple[int | None, int | None]:
    """The client's pid and uid, from the kernel (Linux ``SO_PEERCRED``)."""
    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None, None
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def _version() -> str:
    try:
        return metadata.version("covey")
    except metadata.PackageNotFoundError:
        return "unknown"
