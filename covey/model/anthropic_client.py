"""The SDK clients of this process: built once per event loop and settings, shared by every
model copy that sends from it."""

from __future__ import annotations

import asyncio
import weakref

import anthropic

from covey.errors import UserError

_CLIENTS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, anthropic.AsyncAnthropic]]" = (
    weakref.WeakKeyDictionary())
"""The SDK clients of this process, per event loop and settings. Every spec an agent actor
runs brings its own copy of the session's model; building a client (its TLS context, its
connection pool) for each would cost every spawn ~20-50 ms of CPU and a new connection."""


def shared_client(options: tuple) -> anthropic.AsyncAnthropic:
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
