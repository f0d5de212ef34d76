"""The node's model gateway: the one process per node that imports the ``anthropic`` SDK, holds
its HTTP clients and talks to the rate scheduler; agent actors stream their requests from it
(``covey.gateway.remote_model.GatewayModel``) and so cost the same memory whatever their model.

``GatewayCore`` is the plain part: one ``AnthropicModel`` per config (the process's,
``AnthropicModel.of``), each request sent through a copy paced by the run's
``SharedAdmission``, its stream events, waits and reply turned into ``GatewayItem`` values.
``_GatewayActor`` is its Ray shell: named per node (``covey:gateway:<node id>``), created with
``get_if_exists`` and pinned to its node. It is detached, unlike the rate scheduler: the
first agent actor to ask is any pooled actor, killed when its session closes, and a gateway
that went with it would fail its other agents' requests in flight and make the next session
pay for the SDK again. It goes when the Ray cluster goes (covey's own local Ray stops with
its driver). The scheduler actors it creates live as long as it does.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import pickle
from typing import Any, AsyncGenerator, Awaitable, Callable, Mapping

import ray
from ray.exceptions import RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from covey.errors import ModelAPIError, first_line
from covey.events import Event, RateLimitEvent
from covey.gateway.ports import Deferred, Failed, GatewayItem, Pacing, Replied, StreamedEvent, Waited
from covey.model.anthropic_config import AnthropicConfig, Credential
from covey.model.base import ModelRequest
from covey.ratelimit import credentials
from covey.ratelimit.actor import SharedAdmission, gateway_name, rate_limit_line
from covey.ratelimit.admission import Admission
from covey.ratelimit.ports import AdmitRequest, Admitted, RateDecision, RateRefused, Wait
from covey.ratelimit.signals import Identity
from covey.ray.handle import TypedHandle, actor_class, without_generic_calls
from covey.ray.local import NAMESPACE

log = logging.getLogger(__name__)

AdmissionFor = Callable[[Pacing, Callable[[Event], None]], Admission]
"""The run's admission, its waits emitted through the given callback."""


def shared_admission(pacing: Pacing, emit: Callable[[Event], None]) -> Admission:
    return SharedAdmission(session_id=pacing.session_id, agent_id=pacing.agent_id,
                           foreground=pacing.foreground, settings=pacing.settings, emit=emit)


class GatewayCore:
    """Sends requests for every agent of a node: plain, one event loop."""

    def __init__(self, admission_for: AdmissionFor = shared_admission,
                 keyed: Callable[[AnthropicConfig], Awaitable[AnthropicConfig]] = credentials.keyed) -> None:
        self.admission_for = admission_for
        self.keyed = keyed
        """A keyless config with its credential (``covey.ratelimit.credentials``)."""

    async def send(self, config: AnthropicConfig, request: ModelRequest, pacing: Pacing | None,
                   stream_events: bool) -> AsyncGenerator[GatewayItem, None]:
        """``request``'s items as they come, the reply or the error last. Closing the
        iterator early (the agent cancelled) cancels the request."""
        from covey.gateway.anthropic import AnthropicModel  # the SDK: loaded (and warmed up) at the start

        items: asyncio.Queue[GatewayItem] = asyncio.Queue()
        try:
            config = await self.keyed(config)
        except Exception as exc:
            yield Failed(_travelling(exc))
            return
        model: Any = AnthropicModel.of(config)
        if pacing is not None:
            model = model.with_admission(self.admission_for(pacing, lambda event: _waited(items, event)))
        if stream_events:
            request = request.model_copy(update={"on_stream": lambda event: items.put_nowait(StreamedEvent(event))})
        task = asyncio.create_task(_answer(model, request, items))
        try:
            while True:
                item = await items.get()
                yield item
                if isinstance(item, (Replied, Failed)):
                    return
        finally:
            task.cancel()  # a no-op once it has answered

    async def direct(self, config: AnthropicConfig, request: ModelRequest,
                     pacing: Pacing | None) -> Replied | Failed | Deferred:
        """``request``'s answer in one call (no stream events asked for), if it is admitted without
        waiting; ``Deferred``, with nothing sent, if it would wait (``send`` then shows its waits).
        The common case costs an agent one plain call: no generator, no scheduler round trip
        while the scheduler lends (``covey.ratelimit.lease``)."""
        from covey.gateway.anthropic import AnthropicModel

        no_wait: _NoWait | None = None
        try:
            model: Any = AnthropicModel.of(await self.keyed(config))
            if pacing is not None:
                no_wait = _NoWait(self.admission_for(pacing, lambda event: None), pacing)
                model = model.with_admission(no_wait)
            return Replied(await model.create(request))
        except _WouldWait:
            return Deferred(no_wait.shown() if no_wait is not None else ())
        except Exception as exc:  # every failure reaches the agent, as the error it is in-process
            return Failed(_travelling(exc))


class _WouldWait(Exception):
    """The scheduler did not admit a ``direct`` request at once."""


class _NoWait:
    """An ``Admission`` that gives a request up instead of waiting (``GatewayCore.direct``); the
    wait that follows an API's refusal is kept to be shown (``refused_then``)."""

    def __init__(self, admission: Admission, pacing: Pacing) -> None:
        self.admission, self.pacing = admission, pacing
        self.record_reply = admission.record_reply
        self.cancel, self.waited = admission.cancel, admission.waited
        self.refused = False
        self.refused_then: list[Wait | RateRefused] = []

    async def record_refusal(self, identity: Identity, request_id: str, status: int,
                             headers: Mapping[str, str]) -> None:
        self.refused = True
        await self.admission.record_refusal(identity, request_id, status, headers)

    def shown(self) -> tuple[RateLimitEvent, ...]:
        """The waits after a refusal, as the run's ``rate_limit_event`` lines."""
        return tuple(rate_limit_line(decision, session_id=self.pacing.session_id, agent_id=self.pacing.agent_id)
                     for decision in self.refused_then)

    async def admit(self, identity: Identity, request: AdmitRequest) -> RateDecision:
        decision = await self.admission.admit(identity, request)
        if not isinstance(decision, Admitted):
            if self.refused:
                self.refused_then.append(decision)
            self.admission.cancel(identity, request.request_id)
            raise _WouldWait()
        return decision


def _waited(items: asyncio.Queue[GatewayItem], event: Event) -> None:
    if isinstance(event, RateLimitEvent):
        items.put_nowait(Waited(event))


async def _answer(model: Any, request: ModelRequest, items: asyncio.Queue[GatewayItem]) -> None:
    try:
        items.put_nowait(Replied(await model.create(request)))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # every failure reaches the agent, as the error it is in-process
        items.put_nowait(Failed(_travelling(exc)))


def _travelling(exc: Exception) -> BaseException:
    """``exc`` if it pickles (covey's errors do), else a ``ModelAPIError`` that says what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        log.warning("a model request failed with an error that cannot travel", exc_info=exc)
        return ModelAPIError(f"the model gateway failed: {type(exc).__name__}: {first_line(exc)}")
    return exc


class _GatewayActor(GatewayCore):
    """Ray shell: ``stream`` is a streaming generator; the SDK is warmed up when it starts."""

    def __init__(self) -> None:
        super().__init__()
        from covey.gateway.anthropic import warm_up_offline

        try:
            warm_up_offline()
        except Exception:  # a warm-up that fails costs the first request its time only
            log.warning("warming up the Anthropic SDK failed", exc_info=True)

    async def stream(self, config: AnthropicConfig, request: ModelRequest, pacing: Pacing | None,
                     stream_events: bool) -> AsyncGenerator[GatewayItem, None]:
        async for item in self.send(config, request, pacing, stream_events):
            yield item

    async def call(self, config: AnthropicConfig, request: ModelRequest,
                   pacing: Pacing | None) -> Replied | Failed | Deferred:
        return await self.direct(config, request, pacing)

    async def ping(self) -> None:
        return None

    async def remember_credential(self, config: AnthropicConfig) -> AnthropicConfig:
        return await credentials.remember(config)

    async def accept_credential(self, credential: Credential) -> bool:
        return credentials.accept(credential)


class GatewayHandle(TypedHandle[_GatewayActor]):
    async def send(self, config: AnthropicConfig, request: ModelRequest, pacing: Pacing | None,
                   stream_events: bool) -> AsyncGenerator[GatewayItem, None]:
        """The request's items; closed before its last (the agent cancelled), it is cancelled there.
        Without stream events, one plain call first (``GatewayCore.direct``); a stream only if
        the request must wait."""
        if not stream_events:
            call: Any = self.remote.call
            ref = call.remote(config, request, pacing)
            try:
                answer = await ref
            except RayActorError as exc:
                raise self._gone(exc) from None
            except asyncio.CancelledError:
                ray.cancel(ref)
                raise
            if not isinstance(answer, Deferred):
                yield answer
                return
            for event in answer.waited:
                yield Waited(event)
        method: Any = self.remote.stream
        stream = method.remote(config, request, pacing, stream_events)
        finished = False
        try:
            async for ref in stream:
                item = await ref
                finished = isinstance(item, (Replied, Failed))
                yield item
        except RayActorError as exc:
            finished = True
            raise self._gone(exc) from None
        finally:
            if not finished:
                ray.cancel(stream)

    async def ping(self) -> None:
        await self._call(self.remote.ping)

    async def remember_credential(self, config: AnthropicConfig) -> AnthropicConfig:
        return await self._call(self.remote.remember_credential, config)

    async def accept_credential(self, credential: Credential) -> bool:
        return await self._call(self.remote.accept_credential, credential)


async def keyless(model: Any) -> Any:
    """(In a driver.) The session's model as its agent actors get it: a real model's config
    without its credential, which this node's gateway keeps and gives to the cluster's holder
    (``covey.ratelimit.credentials``); any other model as it is."""
    config = getattr(model, "config", None)
    if not isinstance(config, AnthropicConfig) or not config.keyed:
        return model
    return await node_gateway().remember_credential(config)


_HANDLE: dict[str, GatewayHandle] = {}
"""This process's gateway handle (its node's), made once."""


def node_gateway() -> GatewayHandle:
    """This node's gateway, created (detached, pinned here) if nobody has yet."""
    node_id = ray.get_runtime_context().get_node_id()
    if (handle := _HANDLE.get(node_id)) is None:
        name = gateway_name(node_id)
        actor = _actor_class().options(
            name=name, namespace=NAMESPACE, get_if_exists=True, lifetime="detached", max_concurrency=10_000,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False)).remote()
        handle = _HANDLE[node_id] = GatewayHandle(actor, name)
    return handle


def forget_node_gateway() -> None:
    """The gateway was found gone: the next request asks for (or creates) a new one."""
    _HANDLE.clear()


@functools.cache
def _actor_class() -> Any:
    return without_generic_calls(actor_class(_GatewayActor))  # it holds the credentials
