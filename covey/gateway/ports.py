"""What travels between an agent's ``GatewayModel`` and its node's gateway: who sends
(``Pacing``), and the items of a request's answer (``GatewayItem``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, AsyncGenerator, Protocol

from covey.events import RateLimitEvent
from covey.model.anthropic_config import AnthropicConfig
from covey.model.base import ModelRequest
from covey.model.messages import Message
from covey.ratelimit.signals import RateLimitSettings


@dataclass(frozen=True)
class Pacing:
    """Who sends a request, for the identity's rate scheduler: the gateway builds the run's
    ``SharedAdmission`` from it (docs/rate-limits.md)."""

    session_id: str
    agent_id: str
    foreground: bool
    settings: RateLimitSettings


@dataclass(frozen=True)
class StreamedEvent:
    """One raw Messages API stream event (``--include-partial-messages``)."""

    event: dict[str, Any]


@dataclass(frozen=True)
class Waited:
    """The request waits for the API's limits (or was refused): the run emits the line."""

    event: RateLimitEvent


@dataclass(frozen=True)
class Replied:
    message: Message


@dataclass(frozen=True)
class Failed:
    error: BaseException


@dataclass(frozen=True)
class Deferred:
    """(``direct`` only.) The request would wait for the API's limits: it goes again as a stream,
    which shows its waits as they come. ``waited``: the wait it already met, if the API refused
    it (429/529) once it was sent, shown at once (the stream may find the pause over)."""

    waited: tuple[RateLimitEvent, ...] = ()


GatewayItem = StreamedEvent | Waited | Replied | Failed


class Send(Protocol):
    """One request to a gateway: its items, as they come (``GatewayHandle.send``, or a core's in a test)."""

    def __call__(self, config: AnthropicConfig, request: ModelRequest, pacing: Pacing | None,
                 stream_events: bool) -> AsyncGenerator[GatewayItem, None]: ...
