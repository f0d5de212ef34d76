"""The service's session hosts: the warm ones, the running ones (its own, and those a service
that died left running), and what ``covey sessions`` and ``covey kill SESSION`` ask of them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Callable

import ray

from covey.agent.warmup import GATEWAY_MODEL
from covey.client import ports as protocol
from covey.client.paths import service_dir
from covey.pool.shared_pool import SharedPoolHandle, pool_name
from covey.service.host import HostHandle, HostSupply, live_hosts
from covey.service.journal import all_meta, read_meta
from covey.service.preflight import KEY_VARIABLES

log = logging.getLogger(__name__)


class Hosts:
    def __init__(self, changed: Callable[[], None]) -> None:
        self.changed = changed
        """Called when a run starts or ends (the service's idle clock)."""
        self.live: dict[str, HostHandle] = {}
        """The hosts whose runs have not ended, by name."""
        self.supply: HostSupply | None = None

    @property
    def running(self) -> bool:
        return bool(self.live)

    async def open(self, node_id: str | None) -> None:
        """Adopt what a service that died left running (before this one makes its own spare)."""
        await self._adopt()
        self.supply = HostSupply(node_id)
        self.supply.warm()

    async def _adopt(self) -> None:
        for name in await asyncio.to_thread(live_hosts):
            host = HostHandle.named(name)
            try:
                status = await asyncio.wait_for(host.status(), 10)
            except Exception as exc:
                log.warning("session host %s does not answer (%s); left alone", name, exc)
                continue
            if status.get("status") == "running":
                log.info("session %s (host %s) runs on from a service that died", status.get("session_id"), name)
                self.watch(host)
            else:  # idle, or its run ended: this service makes its own spares
                host.kill()

    async def take(self) -> HostHandle:
        if self.supply is None:
            raise RuntimeError("the service's session hosts are not open yet")
        return await self.supply.take()

    def watch(self, host: HostHandle, followed: asyncio.Event | None = None) -> None:
        """Count the host among the running until its run ends; then ready it for another run, once
        the run's own client has had every line (``followed``: a run may end before it is followed)."""
        async def ended() -> None:
            try:
                await host.ended()
                if followed is not None:
                    await followed.wait()
                if self.supply is not None:
                    await self.supply.give_back(host)
            except Exception:
                pass
            finally:
                self.live.pop(host.name, None)
                self.changed()

        self.live[host.name] = host
        self.changed()
        asyncio.get_running_loop().create_task(ended())

    async def sessions(self) -> list[dict[str, Any]]:
        """Every session this user's service ran (``covey sessions``), the running ones with their
        hosts' live figures (agents running, cost so far, questions waiting for a client)."""
        figures = {}  # by session id: a host serves one session after another
        for host in list(self.live.values()):
            with contextlib.suppress(Exception):
                status = await asyncio.wait_for(host.status(), 5)
                figures[status.get("session_id")] = status
        found = []
        for meta in await asyncio.to_thread(all_meta):
            live = figures.get(meta.get("session_id"))
            if meta.get("status") == "running" and live is None and meta.get("host") not in self.live:
                meta["status"] = "lost"  # its host went before the run ended (a busy one only gave no figures)
            found.append({**meta, **(live or {})})
        return found

    async def kill(self, request_id: str, session_id: str) -> protocol.ControlResponse:
        """Stop a running session (``covey kill SESSION``): its run is cancelled as an interrupt is."""
        meta = read_meta(session_id)
        host = self.live.get((meta or {}).get("host", ""))
        if meta is None or host is None:
            return protocol.error(request_id, f"no running session {session_id!r} (see `covey sessions`)")
        await host.cancel("interrupted", meta.get("run_id"))
        return protocol.success(request_id, {"session_id": session_id})

    async def cancel_all(self, why: str) -> None:
        for host in list(self.live.values()):
            with contextlib.suppress(Exception):
                await host.cancel(why)

    def close(self) -> None:
        if self.supply is not None:
            self.supply.close()
            self.supply = None


def session_dir() -> str:
    """The session directory of the Ray this driver is connected to."""
    from ray._private import worker

    node = worker.global_worker.node
    return str(node.get_session_dir_path()) if node is not None else ""


def service_preload(env: dict[str, str]) -> tuple[str, ...]:
    """What the pool's agent actors load before they are lent, besides covey's own run modules.
    Agents never load the Anthropic SDK (the node's model gateway sends their requests): with a
    key in the environment, the gateway model, whose warm-up starts the gateway ahead of the
    first request; without one (the demo, scripted runs) nothing, and no gateway. A session on
    the API adds it when it takes its kit."""
    return (GATEWAY_MODEL,) if any(env.get(name) for name in KEY_VARIABLES) else ()

def shared_pool(preload: tuple[str, ...]) -> SharedPoolHandle:
    """The shared pool: the one a service that died left (its sessions hold its kits and agents),
    else a new one, detached so that the sessions it lends to do not share the service's fate."""
    try:
        return SharedPoolHandle.named(pool_name(str(service_dir())))
    except ValueError:
        return SharedPoolHandle.create(pool_name(str(service_dir())), ray.get_runtime_context().get_node_id(),
                                       preload=preload, lifetime="detached")
