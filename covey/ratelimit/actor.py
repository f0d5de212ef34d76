"""The rate schedulers as one Ray actor (one per cluster, every API identity's scheduler in it),
the handle an identity's requests go through, and the ``Admission`` an agent run's model
consults through it.

The actor is named ``covey:ratelimits`` in the ``covey`` namespace and created with
``get_if_exists``, so every agent of every session on the cluster that sends with the same base
URL, credential and model class waits in its identity's one queue; a new identity is a new
scheduler in it, not a new process. It is not detached: it lives as long as the process that
created it (the node's model gateway, detached itself); when that process goes, the next call
finds it gone and ``SharedAdmission`` creates it again, which then learns the limits from the next
reply's headers (docs/rate-limits.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from dataclasses import replace
from typing import Any, Awaitable, Callable, Mapping, TypeVar

import ray

from covey.errors import AgentUnavailable
from covey.events import Event, RateLimitEvent
from covey.model.anthropic_config import AnthropicConfig, Credentials
from covey.model.base import TokenUsage
from covey.ratelimit.lease import Lease, LeaseHolder, LeaseReport
from covey.ratelimit.ports import AdmitRequest, Admitted, RateDecision, RateSnapshot, RateRefused, Wait, rate_limit_event
from covey.ratelimit.schedulers import RateSchedulers
from covey.ratelimit.signals import Identity, RateLimitSettings
from covey.ray.handle import TypedHandle, actor_class, without_generic_calls
from covey.ray.local import NAMESPACE

R = TypeVar("R")


class _RateLimitsActor(RateSchedulers):
    """Ray shell: each identity's scheduler's calls as async methods (one event loop: no call
    interleaves); and the credentials of keyless model configs (``covey.ratelimit.credentials``)."""

    def __init__(self) -> None:
        super().__init__()
        self.credentials = Credentials()

    async def remember_credential(self, config: AnthropicConfig) -> AnthropicConfig:
        return self.credentials.remember(config)

    async def send_credential(self, credential_id: str, node_id: str) -> bool:
        """Give a credential to the gateway of the live node ``node_id``, found by its name, never
        to the caller (``covey.ratelimit.credentials``); whether it was given."""
        if (found := self.credentials.credential(credential_id)) is None:
            return False
        if (gateway := await asyncio.to_thread(_gateway_of, node_id)) is None:
            return False  # no gateway there: the asker is not one
        given: bool = await gateway.accept_credential.remote(found)
        return given

    async def ask(self, identity: Identity, settings: RateLimitSettings | None, request: AdmitRequest) -> RateDecision:
        scheduler = self.of(identity)
        scheduler.hold(request.session_id, settings)
        return scheduler.admit(request)

    async def ask_leasing(self, identity: Identity, settings: RateLimitSettings | None,
                          request: AdmitRequest) -> tuple[RateDecision, Lease | None]:
        """``ask``, and once admitted a lease if the scheduler lends one (``covey/ratelimit/lease.py``)."""
        decision = await self.ask(identity, settings, request)
        return decision, self.of(identity).lease() if isinstance(decision, Admitted) else None

    async def report(self, identity: Identity, report: LeaseReport) -> bool:
        return self.of(identity).report(report)

    async def replied(self, identity: Identity, request_id: str, headers: dict[str, str],
                      usage: TokenUsage | None) -> None:
        self.of(identity).record_reply(request_id, headers=headers, usage=usage)

    async def refused(self, identity: Identity, request_id: str, status: int, headers: dict[str, str]) -> None:
        self.of(identity).record_refusal(request_id, status, headers)

    async def forget(self, identity: Identity, request_id: str) -> None:
        self.of(identity).cancel(request_id)

    async def state(self, identity: Identity) -> RateSnapshot:
        return self.of(identity).snapshot()

    async def states(self) -> list[RateSnapshot]:
        return self.snapshots()

    async def sentinel(self) -> None:
        """Never answers: a watcher learns of this actor's death by the call failing."""
        await asyncio.Event().wait()


def gateway_name(node_id: str) -> str:
    """The name of a node's model gateway (``covey.gateway.actor``)."""
    return f"covey:gateway:{node_id}"


def _gateway_of(node_id: str) -> Any:
    """The gateway actor of the live node ``node_id``, if it has one (blocking calls to the GCS)."""
    nodes: list[dict[str, Any]] = _ray_nodes()
    if not any(node.get("NodeID") == node_id and node.get("Alive") for node in nodes):
        return None
    try:
        return ray.get_actor(gateway_name(node_id), namespace=NAMESPACE)
    except ValueError:
        return None


_ray_nodes: Callable[[], list[dict[str, Any]]] = ray.nodes
"""``ray.nodes``, typed (Ray's own is not)."""


class RateLimitHandle(TypedHandle[_RateLimitsActor]):
    """The schedulers' actor, as one identity's requests reach it. Each request brings its run's
    limits set by hand (``settings``), which the scheduler holds while the run sends."""

    def __init__(self, actor: Any, name: str, identity: Identity) -> None:
        super().__init__(actor, name)
        self.identity = identity

    async def admit(self, request: AdmitRequest, settings: RateLimitSettings | None = None) -> RateDecision:
        return await self._call(self.remote.ask, self.identity, settings, request)

    async def admit_leasing(self, request: AdmitRequest,
                            settings: RateLimitSettings | None = None) -> tuple[RateDecision, Lease | None]:
        return await self._call(self.remote.ask_leasing, self.identity, settings, request)

    async def report(self, report: LeaseReport) -> bool:
        return await self._call(self.remote.report, self.identity, report)

    async def record_reply(self, request_id: str, headers: Mapping[str, str], usage: TokenUsage | None) -> None:
        await self._call(self.remote.replied, self.identity, request_id, dict(headers), usage)

    def tell_reply(self, request_id: str, headers: Mapping[str, str], usage: TokenUsage | None) -> None:
        self._tell(self.remote.replied, self.identity, request_id, dict(headers), usage)

    async def record_refusal(self, request_id: str, status: int, headers: Mapping[str, str]) -> None:
        await self._call(self.remote.refused, self.identity, request_id, status, dict(headers))

    def cancel(self, request_id: str) -> None:
        self._tell(self.remote.forget, self.identity, request_id)

    async def snapshot(self) -> RateSnapshot:
        return await self._call(self.remote.state, self.identity)

    async def every_snapshot(self) -> list[RateSnapshot]:
        """Every identity's state (``covey status``)."""
        return await self._call(self.remote.states)

    async def remember_credential(self, config: AnthropicConfig) -> AnthropicConfig:
        """Keep ``config``'s credential on the cluster; its keyless form."""
        return await self._call(self.remote.remember_credential, config)

    async def send_credential(self, credential_id: str, node_id: str) -> bool:
        """Have the holder give the credential to ``node_id``'s gateway; whether it did."""
        return await self._call(self.remote.send_credential, credential_id, node_id)


async def scheduler_states(timeout_s: float = 2.0) -> list[dict[str, Any]]:
    """Every identity's rate scheduler on the cluster, as ``covey status`` shows it (none if the
    actor does not exist or does not answer in ``timeout_s``: a status never hangs on it)."""

    def found() -> Any:  # a blocking call to the GCS: off the event loop
        try:
            return ray.get_actor(ACTOR_NAME, namespace=NAMESPACE)
        except ValueError:  # nobody has sent a request yet
            return None

    actor = await asyncio.to_thread(found)
    if actor is None:
        return []
    handle = RateLimitHandle(actor, ACTOR_NAME, Identity("", "", ""))
    try:
        return [dataclasses.asdict(state) for state in await asyncio.wait_for(handle.every_snapshot(), timeout_s)]
    except Exception:  # gone or busy: not shown
        return []


ACTOR_NAME = "covey:ratelimits"
"""The one actor of a cluster that holds every identity's scheduler."""


def rate_limit_handle(identity: Identity) -> RateLimitHandle:
    """``identity``'s way to the cluster's schedulers' actor, created if nobody has yet."""
    options: dict[str, Any] = dict(name=ACTOR_NAME, namespace=NAMESPACE, get_if_exists=True)
    return RateLimitHandle(_actor_class().options(**options).remote(), ACTOR_NAME, identity)


@functools.cache
def _actor_class() -> Any:
    return without_generic_calls(actor_class(_RateLimitsActor))  # it holds the credentials


_HANDLES: dict[str, RateLimitHandle] = {}
"""This process's handles by identity key: a pooled agent actor runs many runs, each asks once."""

_LEASES = LeaseHolder()
"""This process's leases (the node's gateway's): requests admitted here while the scheduler lends."""


class SharedAdmission:
    """One agent run's ``Admission``: its requests carry its session, agent and foreground flag
    to the identity's shared scheduler; each wait is emitted as a ``rate_limit_event``."""

    def __init__(self, *, session_id: str, agent_id: str, foreground: bool, settings: RateLimitSettings,
                 emit: Callable[[Event], None] | None = None,
                 handle_for: Callable[[Identity], RateLimitHandle] = rate_limit_handle,
                 handles: dict[str, RateLimitHandle] | None = None, leases: LeaseHolder | None = None) -> None:
        self.session_id, self.agent_id, self.foreground = session_id, agent_id, foreground
        self.settings, self.emit, self.handle_for = settings, emit, handle_for
        self._handles = _HANDLES if handles is None else handles
        self._leases = _LEASES if leases is None else leases

    def _handle(self, identity: Identity) -> RateLimitHandle:
        if (handle := self._handles.get(identity.key)) is None:
            handle = self._handles[identity.key] = self.handle_for(identity)
        return handle

    async def _each(self, identity: Identity, call: Callable[[RateLimitHandle], Awaitable[R]]) -> R:
        """``call`` on the identity's actor; once more on a new one if that actor is gone."""
        try:
            return await call(self._handle(identity))
        except AgentUnavailable:
            self._handles.pop(identity.key, None)
            return await call(self._handle(identity))

    async def admit(self, identity: Identity, request: AdmitRequest) -> RateDecision:
        """Under this process's lease of the identity if it has room, else by the scheduler
        (asking for a lease with it when none is held)."""
        ours = replace(request, session_id=self.session_id, agent_id=request.agent_id or self.agent_id,
                       foreground=self.foreground, patience_s=self.settings.patience_s)
        if self._leases.admit_here(identity.key, ours, self.settings):
            return Admitted(request.request_id, 0.0)
        if not self._leases.wants(identity.key):
            return await self._each(identity, lambda handle: handle.admit(ours, self.settings))
        lease = None
        try:
            decision, lease = await self._each(identity, lambda handle: handle.admit_leasing(ours, self.settings))
        finally:
            self._leases.asked(identity.key, lease, lambda report: self._each(identity, lambda h: h.report(report)))
        return decision

    async def record_reply(self, identity: Identity, request_id: str, headers: Mapping[str, str],
                           usage: TokenUsage | None) -> None:
        """Told, not awaited: the reply waits for no round trip to the scheduler. The next
        request's ``admit`` may overtake it; it is then charged with this one's estimate a moment
        longer. A scheduler found gone is made again by the next ``admit``. A request sent under
        a lease is told with the lease's next report."""
        if not self._leases.replied(request_id, headers, usage):
            self._handle(identity).tell_reply(request_id, headers, usage)

    async def record_refusal(self, identity: Identity, request_id: str, status: int,
                             headers: Mapping[str, str]) -> None:
        self._leases.refused(identity.key, request_id)  # the lease ends; sent under it, the request queues
        await self._each(identity, lambda handle: handle.record_refusal(request_id, status, headers))

    def cancel(self, identity: Identity, request_id: str) -> None:
        if not self._leases.forget(request_id):
            self._handle(identity).cancel(request_id)

    def waited(self, decision: Wait | RateRefused) -> None:
        if self.emit is not None:
            self.emit(rate_limit_line(decision, session_id=self.session_id, agent_id=self.agent_id))


def rate_limit_line(decision: Wait | RateRefused, *, session_id: str, agent_id: str) -> RateLimitEvent:
    """A wait (or the refusal) as the ``rate_limit_event`` line the run emits."""
    line = rate_limit_event(decision, session_id=session_id, now=time.time())
    return RateLimitEvent(rate_limit_info=line["rate_limit_info"], uuid=line["uuid"], session_id=session_id,
                          agent_id=decision.agent_id or agent_id)
