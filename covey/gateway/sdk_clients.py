"""The SDK clients of this process: built once per event loop and settings, shared by every
model copy that sends from it."""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any

import anthropic
from anthropic.lib.streaming import AsyncMessageStreamManager
from anthropic.types import Message, RawMessageStreamEvent

from covey.errors import UserError

_CLIENTS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], anthropic.AsyncAnthropic]]" = (
    weakref.WeakKeyDictionary())
"""The SDK clients of this process, per event loop and settings. Every spec an agent actor
runs brings its own copy of the session's model; building a client (its TLS context, its
connection pool) for each would cost every spawn ~20-50 ms of CPU and a new connection."""


def shared_client(options: tuple[Any, ...]) -> anthropic.AsyncAnthropic:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not in a loop: nothing to share it with
        return make_client(*options)
    clients = _CLIENTS.setdefault(loop, {})
    if (client := clients.get(options)) is None:
        client = clients[options] = make_client(*options)
    return client


def make_client(
    api_key: str | None, auth_token: str | None, base_url: str | None, max_retries: int, timeout_s: float
) -> anthropic.AsyncAnthropic:
    try:
        client = anthropic.AsyncAnthropic(
            api_key=api_key, auth_token=auth_token, base_url=base_url, max_retries=max_retries, timeout=timeout_s
        )
    except anthropic.CredentialsError as exc:  # e.g. ANTHROPIC_PROFILE names a missing config file
        raise UserError(f"cannot load Anthropic credentials: {exc}") from exc
    if not (client.api_key or client.auth_token or client.credentials):
        raise UserError(
            "no Anthropic API key: set ANTHROPIC_API_KEY, or use --model scripted:PATH to run without the API"
        )
    return client


STREAM_HEADERS = {"x-stainless-helper-method": "stream", "x-stainless-stream-helper": "messages"}
"""What the SDK's ``messages.stream`` helper adds to a request's headers."""


def open_stream(client: anthropic.AsyncAnthropic, kwargs: dict[str, Any]) -> AsyncMessageStreamManager[Any]:
    """``client.messages.stream(**kwargs)``, its body written once by ``json.dumps``. The SDK
    would first copy the whole body, every message of the history and every tool's schema, to
    look for files to read in it (there are none in covey's): a quarter of a gateway's CPU per
    request in a fan-out. A body that ``json`` cannot write goes the SDK's own way."""
    kwargs = dict(kwargs)
    headers = {**STREAM_HEADERS, **(kwargs.pop("extra_headers", None) or {})}
    try:
        data = json.dumps({**kwargs, "stream": True}, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError):
        return client.messages.stream(**kwargs, extra_headers=headers)
    request = client.post("/v1/messages", content=data, options={"headers": headers}, cast_to=Message,
                          stream=True, stream_cls=anthropic.AsyncStream[RawMessageStreamEvent])
    return AsyncMessageStreamManager(request)
