"""The session host: a detached actor that drives one served run, so the run does not share
the covey service's fate.

The service takes a warm host for every run (``HostSupply``), starts the run on it and
relays: the client's lines in, as the values the service read them into (``take``), the run's
lines out, as the journal's bytes (``follow``). The run itself (``ServedRun`` or
``ConversationRun``, the same classes an in-process service used) reads its client from a
queue and puts its lines into the run's ``RunLog``, so a client that
leaves, or a service that dies, takes nothing with it: a later ``covey attach`` reads the
journal from any line on. The host is detached (Ray's ``lifetime="detached"``: owned by
the cluster, not by the service that made it), pinned to the service's node (the run's
cwd, files and client are there), and leaves once its run has ended and nobody follows it.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import TYPE_CHECKING, Any, AsyncIterator

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from covey.client import ports as protocol
from covey.client.ports import RunLine, RunRequest
from covey.ray.handle import TypedHandle, actor_class
from covey.ray.local import NAMESPACE
from covey.service.journal import RunLog
from covey.service.ports import HostPort, LineSource, RunMeta, Unreadable

if TYPE_CHECKING:
    from covey.service.runs import ServedRun

log = logging.getLogger(__name__)

HOST_PREFIX = "covey:host:"


class _QueueSource:
    """The run's ``LineSource``: the client's lines, as the service passes them on; None at the end."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[RunLine | Unreadable | None] = asyncio.Queue()

    async def next_line(self) -> RunLine | Unreadable | None:
        return await self.queue.get()


class _HostActor:
    """Ray shell over one served run and its journal."""

    def __init__(self) -> None:
        # What a run needs, loaded before the host is lent (a cold import is ~1.5 s).
        from covey.service import conversation, runs  # noqa: F401

        self.source = _QueueSource()
        self.journal: RunLog | None = None
        self.run: ServedRun | None = None
        self.run_id = ""
        """The ``covey_run`` request id of the run this host drives."""
        self.followers = 0
        self._served: asyncio.Task[None] | None = None

    async def start(self, request: RunRequest, meta: RunMeta) -> None:
        from covey.service.conversation import ConversationRun
        from covey.service.runs import ServedRun

        kind = ConversationRun if request["request"]["run"].get("conversation") else ServedRun
        self.run_id = request["request_id"]
        self.journal = RunLog(meta)
        self.run = kind(request, self.source, self.journal, client_pid=meta.get("client_pid"))
        self._served = asyncio.create_task(self._serve())

    async def _serve(self) -> None:
        assert self.run is not None and self.journal is not None
        try:
            await self.run.serve()
        except BaseException as exc:  # the journal must end whatever happened
            if not self.journal.done:
                self.journal.add(protocol.done(f"the session's host failed: {exc!r}"))
            raise
        finally:
            if not self.journal.done:
                self.journal.add(protocol.done("the run ended without a word"))

    async def reset(self) -> bool:
        """Ready for another run once this one has ended; False (keep it as it is) if it has not."""
        if self._served is not None and not self._served.done():
            return False
        self.source, self.journal, self.run, self._served, self.run_id = _QueueSource(), None, None, None, ""
        return True

    async def follow(self, run_id: str, after: int = -1) -> AsyncIterator[tuple[int, list[bytes]]]:
        """Run ``run_id``'s lines after ``after`` as they come; nothing if this host now drives another."""
        if self.journal is None or run_id != self.run_id:  # it ended, and this host drives another run now
            raise ValueError(f"session host {self.run_id!r} does not drive run {run_id!r} any more")
        self.followers += 1
        try:
            async for batch in self.journal.batches(after):
                yield batch
        finally:
            self.followers -= 1

    async def take(self, run_id: str, line: RunLine | Unreadable | None) -> None:
        """A client's line for run ``run_id`` (None: the client that owns the run has gone). A line
        for an earlier run of this host (its client's last words, come after the host was reset)
        is dropped."""
        if run_id != self.run_id:
            return
        if isinstance(line, dict) and line["type"] == "control_response" and self.journal is not None:
            self.journal.answer(line["response"]["request_id"])
        self.source.queue.put_nowait(line)

    async def cancel(self, why: str, run_id: str | None = None) -> None:
        """Cancel the run (``run_id``: only if it is still the one this host drives)."""
        if self.run is not None and run_id in (None, self.run_id):
            self.run.cancel(why)

    async def ended(self) -> bool:
        """Answers once the run has ended (at once for a host that was never given one: False)."""
        if self._served is None:
            return False
        await asyncio.shield(self._served)
        return True

    async def status(self) -> dict[str, Any]:
        """The run's record (``RunLog.meta``), with what it does now: agents running, cost."""
        journal, run = self.journal, self.run
        if journal is None:
            return {"status": "idle"}
        status = dict(journal.meta)
        session = getattr(run, "session", None)
        if session is not None and not journal.done:
            status.update(await _live_figures(session))
        status["waiting"] = journal.waiting()
        status["questions"] = len(status["waiting"])
        return status


async def _live_figures(session: Any) -> dict[str, Any]:
    try:
        runtime = await session.start()
        records = await runtime.registry.records()
    except Exception:  # the figures never stop a run
        return {}
    running = [record for record in records if getattr(record, "status", "") in ("running", "queued")]
    cost = sum(float(getattr(record, "cost_usd", 0.0) or 0.0) for record in records)
    return {"agents_running": len(running), "cost_usd": round(cost, 6)}


class HostHandle(TypedHandle[_HostActor]):
    """The one place that calls a session host."""

    @classmethod
    def create(cls, node_id: str | None = None) -> "HostHandle":
        name = f"{HOST_PREFIX}{secrets.token_hex(6)}"
        options: dict[str, Any] = {"name": name, "namespace": NAMESPACE, "lifetime": "detached"}
        if node_id:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=False)
        return cls(actor_class(_HostActor).options(**options).remote(), name)

    @classmethod
    def named(cls, name: str) -> "HostHandle":
        return cls(ray.get_actor(name, namespace=NAMESPACE), name)

    async def ready(self) -> None:
        await self.actor.__ray_ready__.remote()

    async def start(self, request: RunRequest, meta: RunMeta) -> None:
        await self._call(self.remote.start, request, meta)

    def follow(self, run_id: str, after: int = -1) -> AsyncIterator[tuple[int, list[bytes]]]:
        return self._stream(self.remote.follow, run_id, after)

    async def take(self, run_id: str, line: RunLine | Unreadable | None) -> None:
        await self._call(self.remote.take, run_id, line)

    async def cancel(self, why: str, run_id: str | None = None) -> None:
        await self._call(self.remote.cancel, why, run_id)

    async def ended(self) -> bool:
        return await self._call(self.remote.ended)

    async def reset(self) -> bool:
        return await self._call(self.remote.reset)

    async def status(self) -> dict[str, Any]:
        return await self._call(self.remote.status)

    def kill(self) -> None:
        try:
            ray.kill(self.actor)
        except Exception:
            pass


def _conforming(handle: HostHandle, source: _QueueSource) -> tuple[HostPort, LineSource]:
    """Never called: the type checker holds these classes to their ports."""
    return handle, source


def live_hosts() -> list[str]:
    """The names of the session hosts alive in this Ray."""
    from ray.util import list_named_actors

    return sorted(entry["name"] for entry in list_named_actors(all_namespaces=True)
                  if isinstance(entry, dict) and entry.get("namespace") == NAMESPACE
                  and str(entry.get("name", "")).startswith(HOST_PREFIX))


class HostSupply:
    """Warm hosts kept ready on the service's node (a host's worker start and imports cost
    ~1.5 s of CPU and ~85 MiB): one made ahead, and the hosts whose runs ended, reset, up to
    ``keep``. Runs one after another reuse one host; a second run at once starts another."""

    def __init__(self, node_id: str | None, keep: int = 1) -> None:
        self.node_id, self.keep = node_id, keep
        self.ready: list[HostHandle] = []

    def warm(self) -> None:
        if not self.ready:
            self.ready.append(HostHandle.create(self.node_id))

    async def take(self) -> HostHandle:
        host = self.ready.pop() if self.ready else HostHandle.create(self.node_id)
        try:
            await host.ready()
        except Exception as exc:  # the spare died: a new one
            log.warning("the warm session host %s is gone (%s); starting another", host.name, exc)
            host = HostHandle.create(self.node_id)
            await host.ready()
        return host

    async def give_back(self, host: HostHandle) -> None:
        """A host whose run ended: ready again, or gone if enough are (then one is made ahead,
        if none is ready)."""
        try:
            if len(self.ready) < self.keep and await host.reset():
                self.ready.append(host)
                return
        except Exception:
            pass
        host.kill()
        self.warm()

    def close(self) -> None:
        for host in self.ready:
            host.kill()
        self.ready.clear()
