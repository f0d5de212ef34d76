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
import logging
import os
import signal
import time
from importlib import metadata
from typing import Any, Awaitable, Callable

import ray

from covey.client import ports as protocol
from covey.client.leftovers import INSTANCE_VAR
from covey.client.paths import ServicePaths, write_private_json
from covey.client.process import same_ray
from covey.pool.shared_pool import SharedPoolHandle
from covey.ray import local as local_rays
from covey.ray import own_ray
from covey.ray.cluster import ensure_ray
from covey.service.hosting import Hosts, service_preload, session_dir, shared_pool
from covey.service.ports import read_control, read_run
from covey.service.relay import HostedRun, attach, detach_refusal, peer
from covey.service.stats import process_figures

log = logging.getLogger(__name__)

STOP_RUNS_S = 30.0
"""How long stopping waits for the runs' agents to stop (their grace is 5 s, 10 s for the registry's)."""

StatsProvider = Callable[[], "dict[str, Any] | Awaitable[dict[str, Any]]"]


class Service:
    def __init__(self, paths: ServicePaths, *, address: str | None, idle_timeout_s: float,
                 pool_stats: StatsProvider | None = None, launched: own_ray.RayStarting | None = None) -> None:
        self.paths, self.address, self.idle_timeout_s = paths, address, idle_timeout_s
        self.launched = launched  # its own Ray, launched before this module was imported (``__main__``)
        self.pool: SharedPoolHandle | None = None
        """The shared warm pool every served session borrows from (agent actors, session kits)."""
        self.pool_stats = pool_stats
        """Figures of the shared warm pool for ``covey status`` (ready, size, high-water): the pool's own by default."""
        self.runs: set[HostedRun] = set()
        """The clients' runs this service relays now."""
        self.hosts = Hosts(self._hosts_changed)
        """The session hosts whose runs have not ended: this service's and those a service that died left."""
        self.started_at = time.time()
        self.idle_since = time.monotonic()
        self.started_ray = False
        self.own_ray: own_ray.OwnRay | None = launched.own if launched else None
        """The Ray this service directory's services run, when no address was given; ``own_ray_new``:
        this service started it."""
        self.own_ray_new = launched is not None
        self.ray_address = ""
        self.ray_session_dir: str | None = None
        self._stopping = asyncio.Event()
        self._runs_changed = asyncio.Event()

    async def serve(self) -> None:
        self._stopping, self._runs_changed = asyncio.Event(), asyncio.Event()  # this loop's, not a stop before serve
        started = time.monotonic()
        try:
            how = await asyncio.to_thread(self._join_ray)
            self.ray_address = ray.get_runtime_context().gcs_address
            log.info("Ray %s in %.1f s", how, time.monotonic() - started)
            # The session host first: it is the first process a run needs (Ray starts two at a time).
            await self.hosts.open(ray.get_runtime_context().get_node_id())
            pool = self.pool = shared_pool(service_preload(dict(os.environ)))
            self.pool_stats = self.pool_stats or pool.stats
        except BaseException:  # a start that failed leaves no Ray it started (one it found keeps its sessions)
            if self.own_ray_new and self.own_ray is not None:
                await asyncio.to_thread(own_ray.abandon, self.own_ray, self.paths)
            raise
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

    def _join_ray(self) -> str:
        """Join the Ray asked for, else this directory's own Ray: the one a service that died
        left running (its sessions with it), or a new one (``own_ray``). How, in words."""
        if self.address:
            ensure_ray(self.address)
            return "joined"
        found = None if self.launched else own_ray.find(self.paths)
        self.own_ray = found or (own_ray.wait_up(self.launched, self.paths) if self.launched
                                 else own_ray.start(self.paths))
        self.own_ray_new = found is None
        self.started_ray = True
        ensure_ray(self.own_ray.address)
        self.ray_session_dir = session_dir()
        local_rays.record(self.own_ray.address, self.ray_session_dir, pid=self.own_ray.pid)
        return f"found running (pid {found.pid})" if found else f"started (pid {self.own_ray.pid})"

    def _hosts_changed(self) -> None:
        if not self.hosts.running:
            self.idle_since = time.monotonic()
        self._runs_changed.set()

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
        await self.hosts.cancel_all("service stopping")
        deadline = time.monotonic() + STOP_RUNS_S
        while (self.runs or self.hosts.running) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        self.hosts.close()
        if self.pool is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.pool.shutdown(), 10)
            self.pool.kill()
        ray.shutdown()
        if self.own_ray is not None:
            await asyncio.to_thread(own_ray.stop, self.own_ray, self.paths)
            local_rays.forget(self.own_ray.pid)
        self.paths.info.unlink(missing_ok=True)
        log.info("covey service pid %d stopped", os.getpid())

    async def _idle_watch(self) -> None:
        """Sleeps until the idle timeout would pass, or until a run starts or ends: an idle
        service wakes once per timeout at most."""
        while True:
            left = None if self.runs or self.hosts.running else self.idle_since + self.idle_timeout_s - time.monotonic()
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
        try:
            kits = (await self.pool.stats()).get("kit") if self.pool is not None else None
            return int(kits.get("lent", 0)) if isinstance(kits, dict) else 0
        except Exception:  # the pool is gone: nothing holds the service
            return 0

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        pid, uid = peer(writer)
        try:
            if uid is not None and uid != os.getuid():
                return log.warning("refused a client of uid %s", uid)
            line = await reader.readline()
            if line:  # read once, here: what goes on is a value
                await self._answer(read_control(protocol.decode(line)), reader, writer, pid)
        except ValueError as exc:  # a line over LINE_LIMIT (asyncio's readline), or not a request (ProtocolError)
            log.warning("a client connection failed: %s", exc)
            with contextlib.suppress(ConnectionError):
                writer.write(protocol.encode(protocol.error("", f"refused: {exc}")))
        except ConnectionError as exc:
            log.warning("a client connection failed: %s", exc)
        except asyncio.CancelledError:
            pass  # the service is exiting: the client sees the connection close
        finally:
            writer.close()

    async def _answer(self, message: protocol.ControlRequest, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter, client_pid: int | None) -> None:
        request_id = message["request_id"]
        match message["request"]["subtype"]:
            case protocol.PING:
                reply = protocol.success(request_id, self._identity())
            case protocol.STATUS:
                reply = protocol.success(request_id, await self.status())
            case protocol.STOP:
                reply = protocol.success(request_id, {"pid": os.getpid()})
                self.stop("covey stop")
            case protocol.RUN:
                await self._serve_run(read_run(message), reader, writer, client_pid)
                return
            case protocol.ATTACH:
                await attach(str(message["request"].get("session_id", "")), reader, writer, request_id, client_pid)
                return
            case protocol.SESSIONS:
                reply = protocol.success(request_id, {"sessions": await self.hosts.sessions()})
            case protocol.KILL_SESSION:
                reply = await self.hosts.kill(request_id, str(message["request"].get("session_id", "")))
            case other:
                reply = protocol.error(request_id, f"unknown request {other!r}")
        writer.write(protocol.encode(reply))
        await writer.drain()

    async def _serve_run(self, request: protocol.RunRequest, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter, client_pid: int | None) -> None:
        if self._stopping.is_set():
            return
        if refused := self._refusal(request["request"]):
            writer.writelines(protocol.encode(line) for line in protocol.refusal(request["request_id"], refused))
            await writer.drain()
            return
        host = await self.hosts.take()
        run = HostedRun(host, request, reader, writer, client_pid)
        self.runs.add(run)
        log.info("run for client pid %s in %s on %s", client_pid, run.cwd, host.name)
        followed = asyncio.Event()
        try:
            await run.begin()
            self.hosts.watch(host, followed)
            await run.relay()
        finally:
            followed.set()
            self.runs.discard(run)
            if not self.runs and not self.hosts.running:
                self.idle_since = time.monotonic()
            self._runs_changed.set()
            log.info("client pid %s left its run on %s", client_pid, host.name)

    def _refusal(self, request: protocol.RunBody) -> str | None:
        """Why this service cannot serve the run, if it cannot (another Ray asked for, ...)."""
        if refused := detach_refusal(request):
            return refused
        wanted = request["options"].get("address")
        if not same_ray(wanted, self._identity()):
            return (f"the covey service runs on Ray {self.address or self.ray_address}, not {wanted}: "
                    f"run `covey stop`, then `covey start --address {wanted}` (or run with --no-service)")
        return None

    def _identity(self) -> dict[str, Any]:
        dashboard = self.own_ray.dashboard if self.own_ray is not None else None  # Ray's, when its own has one
        return {"pid": os.getpid(), "version": _version(), "ray_address": self.ray_address, "address": self.address,
                "dashboard": dashboard}

    async def status(self) -> dict[str, Any]:
        now = time.time()
        status = {
            **self._identity(), "started_at": self.started_at, "uptime_s": round(now - self.started_at, 1),
            "started_ray": self.started_ray, "socket": str(self.paths.socket), "log": str(self.paths.log),
            "idle_timeout_s": self.idle_timeout_s,
            "idle_s": 0.0 if self.runs or self.hosts.running else round(time.monotonic() - self.idle_since, 1),
            "sessions": [{"session_id": entry.get("session_id"), "cwd": entry.get("cwd"),
                          "client_pid": entry.get("client_pid"), "running_s": round(now - entry["started_at"], 1),
                          "detached": entry.get("detached", False)}
                         for entry in await self.hosts.sessions() if entry.get("status") == "running"],
            "processes": await asyncio.to_thread(process_figures),
        }
        if self.pool_stats is not None:
            figures = self.pool_stats()
            status["pool"] = await figures if asyncio.iscoroutine(figures) else figures
        if ray.is_initialized():
            from covey.ratelimit.actor import scheduler_states  # loads the model's scheduler: only here

            status["rate_limits"] = await scheduler_states()
        return status

    def _write_info(self) -> None:
        write_private_json(self.paths.info, {
            "pid": os.getpid(), "instance": os.environ.get(INSTANCE_VAR), "started_at": self.started_at,
            "ray_address": self.ray_address, "ray_session_dir": self.ray_session_dir, "address": self.address,
            "idle_timeout_s": self.idle_timeout_s, "version": _version(), "socket": str(self.paths.socket)})


def _version() -> str:
    try:
        return metadata.version("covey")
    except metadata.PackageNotFoundError:
        return "unknown"
