"""The rate scheduler as a Ray actor (one per API identity on the cluster), its handle, and the
``Admission`` an agent run's model consults through it.

The actor is named from the identity's key (a hash of it: the key holds only a hash of the
credential, never the credential) in the ``covey`` namespace and created with
``get_if_exists``, so every agent of every session on the cluster that sends with the same
base URL, credential and model class waits in its one queue. It is not detached: it lives as
long as the process that created it (the first agent actor that asked); when that process
goes, the next call finds it gone and ``SharedAdmission`` creates it again, which then learns
the limits from the next reply's headers (docs/rate-limits.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import time
from dataclasses import replace
from typing import Any, Awaitable, Callable, Mapping, TypeVar

import ray

from covey.actors.base import TypedHandle, actor_class
from covey.errors import AgentUnavailable
from covey.events import Event, RateLimitEvent
from covey.local_rays import NAMESPACE
from covey.model.base import TokenUsage
from covey.model.ratelimit import RateScheduler
from covey.model.ratelimit_signals import Identity, RateLimitSettings
from covey.model.ratelimit_types import AdmitRequest, Decision, RateSnapshot, Refused, Wait, rate_limit_event

R = TypeVar("R")


class _RateLimitActor(RateScheduler):
    """Ray shell: the plain scheduler's calls as async methods (one event loop: no call interleaves)."""

    async def ask(self, request: AdmitRequest) -> Decision:
        return self.admit(request)

    async def replied(self, request_id: str, headers: dict[str, str], usage: TokenUsage | None) -> None:
        self.record_reply(request_id, headers=headers, usage=usage)

    async def refused(self, request_id: str, status: int, headers: dict[str, str]) -> None:
        self.record_refusal(request_id, status, headers)

    async def forget(self, request_id: str) -> None:
        self.cancel(request_id)

    async def state(self) -> RateSnapshot:
        return self.snapshot()

    async def sentinel(self) -> None:
        """Never answers: a watcher learns of this actor's death by the call failing."""
        await asyncio.Event().wait()


class RateLimitHandle(TypedHandle[_RateLimitActor]):
    async def admit(self, request: AdmitRequest) -> Decision:
        return await self._call(self.remote.ask, request)

    async def record_reply(self, request_id: str, headers: Mapping[str, str], usage: TokenUsage | None) -> None:
        await self._call(self.remote.replied, request_id, dict(headers), usage)

    def tell_reply(self, request_id: str, headers: Mapping[str, str], usage: TokenUsage | None) -> None:
        self._tell(self.remote.replied, request_id, dict(headers), usage)

    async def record_refusal(self, request_id: str, status: int, headers: Mapping[str, str]) -> None:
        await self._call(self.remote.refused, request_id, status, dict(headers))

    def cancel(self, request_id: str) -> None:
        self._tell(self.remote.forget, request_id)

    async def snapshot(self) -> RateSnapshot:
        return await self._call(self.remote.state)


async def scheduler_states(timeout_s: float = 2.0) -> list[dict[str, Any]]:
    """Every rate scheduler on the cluster, its state as ``covey status`` shows it (one that does
    not answer in ``timeout_s`` is left out: a status never hangs on a busy actor)."""
    def handles() -> list[RateLimitHandle]:  # blocking calls to the GCS: off the event loop
        names = [entry["name"] for entry in ray.util.list_named_actors(all_namespaces=True)
                 if entry.get("namespace") == NAMESPACE and entry["name"].startswith(ACTOR_PREFIX)]
        found = []
        for name in names:
            try:
                found.append(RateLimitHandle(ray.get_actor(name, namespace=NAMESPACE), name))
            except ValueError:  # gone since it was listed
                continue
        return found

    async def one(handle: RateLimitHandle) -> dict[str, Any] | None:
        try:
            return dataclasses.asdict(await asyncio.wait_for(handle.snapshot(), timeout_s))
        except Exception:  # gone or busy: not shown
            return None

    states = await asyncio.gather(*map(one, await asyncio.to_thread(handles)))
    return [state for state in states if state is not None]


ACTOR_PREFIX = "covey:ratelimit:"


def actor_name(identity: Identity) -> str:
    """``covey:ratelimit:<hash of the identity's key>``: short, and safe whatever the base URL holds."""
    return f"{ACTOR_PREFIX}{hashlib.sha256(identity.key.encode()).hexdigest()[:16]}"


def rate_limit_handle(identity: Identity, settings: RateLimitSettings | None = None) -> RateLimitHandle:
    """The identity's scheduler actor, created if nobody has yet (then with ``settings``; an
    existing actor keeps the limits it was created with)."""
    name = actor_name(identity)
    options: dict[str, Any] = dict(name=name, namespace=NAMESPACE, get_if_exists=True)
    actor = _actor_class().options(**options).remote(identity, settings)
    return RateLimitHandle(actor, name)


@functools.cache
def _actor_class() -> Any:
    return actor_class(_RateLimitActor)


_HANDLES: dict[str, RateLimitHandle] = {}
"""This process's handles by identity key: a pooled agent actor runs many runs, each asks once."""


class SharedAdmission:
    """One agent run's ``Admission``: its requests carry its session, agent and foreground flag
    to the identity's shared scheduler; each wait is emitted as a ``rate_limit_event``."""

    def __init__(self, *, session_id: str, agent_id: str, foreground: bool, settings: RateLimitSettings,
                 emit: Callable[[Event], None] | None = None,
                 handle_for: Callable[[Identity, RateLimitSettings], RateLimitHandle] = rate_limit_handle,
                 handles: dict[str, RateLimitHandle] | None = None) -> None:
        self.session_id, self.agent_id, self.foreground = session_id, agent_id, foreground
        self.settings, self.emit, self.handle_for = settings, emit, handle_for
        self._handles = _HANDLES if handles is None else handles

    def _handle(self, identity: Identity) -> RateLimitHandle:
        if (handle := self._handles.get(identity.key)) is None:
            handle = self._handles[identity.key] = self.handle_for(identity, self.settings)
        return handle

    async def _each(self, identity: Identity, call: Callable[[RateLimitHandle], Awaitable[R]]) -> R:
        """``call`` on the identity's actor; once more on a new one if that actor is gone."""
        try:
            return await call(self._handle(identity))
        except AgentUnavailable:
            self._handles.pop(identity.key, None)
            return await call(self._handle(identity))

    async def admit(self, identity: Identity, request: AdmitRequest) -> Decision:
        ours = replace(request, session_id=self.session_id, agent_id=request.agent_id or self.agent_id,
                       foreground=self.foreground, patience_s=self.settings.patience_s)
        return await self._each(identity, lambda handle: handle.admit(ours))

    async def record_reply(self, identity: Identity, request_id: str, headers: Mapping[str, str],
                           usage: TokenUsage | None) -> None:
        """Told, not awaited: the reply waits for no round trip to the scheduler. The next
        request's ``admit`` may overtake it; it is then charged with this one's estimate a moment
        longer. A scheduler found gone is made again by the next ``admit``."""
        self._handle(identity).tell_reply(request_id, headers, usage)

    async def record_refusal(self, identity: Identity, request_id: str, status: int,
                             headers: Mapping[str, str]) -> None:
        await self._each(identity, lambda handle: handle.record_refusal(request_id, status, headers))

    def cancel(self, identity: Identity, request_id: str) -> None:
        self._handle(identity).cancel(request_id)

    def waited(self, decision: Wait | Refused) -> None:
        if self.emit is not None:
            self.emit(rate_limit_line(decision, session_id=self.session_id, agent_id=self.agent_id))


def rate_limit_line(decision: Wait | Refused, *, session_id: str, agent_id: str) -> RateLimitEvent:
    """A wait (or the refusal) as the ``rate_limit_event`` line the run emits."""
    line = rate_limit_event(decision, session_id=session_id, now=time.time())
    return RateLimitEvent(rate_limit_info=line["rate_limit_info"], uuid=line["uuid"], session_id=session_id,
                          agent_id=decision.agent_id or agent_id)
