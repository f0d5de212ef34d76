"""What an agent actor's model is under Ray: ``GatewayModel``, which sends each request through
its node's model gateway (``covey.gateway.actor``) and never imports the ``anthropic`` SDK.

The gateway answers a request with a stream of ``GatewayItem`` values (``covey/gateway/ports.py``): the
Messages API's raw stream events (when the request asked for them), the rate scheduler's waits
(as the ``rate_limit_event`` they are), then the reply or the error. An error travels as a value,
the same covey error the model raises in-process (``ModelAPIError``, ``RateLimitRefused``,
``UserError``), so the agent's loop cannot tell the two paths apart.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import Callable

from covey.errors import AgentUnavailable, ModelAPIError
from covey.events import Event
from covey.gateway.actor import forget_node_gateway, node_gateway
from covey.gateway.ports import Failed, Pacing, Replied, Send, StreamedEvent
from covey.model.anthropic_config import AnthropicConfig
from covey.model.base import ModelRequest
from covey.model.messages import Message


class GatewayModel:
    """The agent's model: ``create`` sends through the gateway ``send`` reaches (this node's:
    ``node_gateway_send``); the SDK, its clients and the rate scheduler's calls live there."""

    def __init__(self, config: AnthropicConfig, *, pacing: Pacing | None = None,
                 emit: Callable[[Event], None] | None = None, send: Send | None = None) -> None:
        self.config, self.pacing, self.emit = config, pacing, emit
        self._send = send

    async def create(self, request: ModelRequest) -> Message:
        try:
            return await self._create(request, self._send or node_gateway_send())
        except _GoneBeforeStart:
            forget_node_gateway()  # gone before the request began: once more, on a new gateway
        try:
            return await self._create(request, node_gateway_send())
        except _GoneBeforeStart as gone:
            raise ModelAPIError(f"the model gateway of this node is gone: {gone.__cause__}") from None

    async def _create(self, request: ModelRequest, send: Send) -> Message:
        on_stream = request.on_stream
        bare = request.model_copy(update={"on_stream": None})  # a callback of this process stays here
        received = False
        try:
            async with aclosing(send(self.config, bare, self.pacing, on_stream is not None)) as items:
                async for item in items:
                    received = True
                    if isinstance(item, Replied):
                        return item.message
                    if isinstance(item, Failed):
                        raise item.error
                    if isinstance(item, StreamedEvent):
                        if on_stream is not None:
                            on_stream(item.event)
                    elif self.emit is not None:
                        self.emit(item.event)
        except AgentUnavailable as exc:
            if not received and self._send is None:
                raise _GoneBeforeStart() from exc
            raise ModelAPIError(f"the model gateway failed during the request: {exc}") from None
        raise ModelAPIError("the model gateway ended the request without a reply")


class _GoneBeforeStart(Exception):
    """The node's gateway was gone before it sent anything back."""


def node_gateway_send() -> Send:
    """This node's gateway (created by the first agent that asks), its ``send``."""
    return node_gateway().send


def warm_up_offline() -> None:
    """A pooled agent actor's warm-up (``covey.agent.warmup``): make sure its node's gateway
    exists, so the first agent that sends does not wait for the SDK to load there."""
    import ray

    if ray.is_initialized():
        node_gateway()
