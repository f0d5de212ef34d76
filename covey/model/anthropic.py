"""The real model: the Messages API through ``anthropic.AsyncAnthropic``, streamed.

Retries happen in two places, both with exponential backoff and jitter:

- Opening the stream (the HTTP status): the SDK's own loop (``max_retries``)
  retries 408/409/429/5xx incl. 529 overload and honours ``retry-after``.
- Mid-stream (an ``error`` event such as ``overloaded_error`` after a 200, or a
  dropped connection): the SDK cannot retry once the body has begun, so covey
  sends the whole request again, up to ``max_retries`` times.

Anything else (400, 401, 403, 404, 413) fails at once. Every failure surfaces as a
one-line ``ModelAPIError`` with the status code.

Usage is recorded per request in ``self.requests`` (the last ``max_records``);
callers that roll usage up per agent read ``message.usage`` from the reply instead.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any, Mapping

import anthropic

from covey.errors import ModelAPIError, UserError
from covey.model.base import ModelRequest, TokenUsage
from covey.model.messages import Message

try:  # A dropped stream raises the HTTP library's error unwrapped; anthropic 2.x uses httpx2.
    import httpx2 as _httpx
except ImportError:
    import httpx as _httpx  # type: ignore[no-redef]  # the same API under its older name
_TransportError = _httpx.TransportError

DEFAULT_BASE_URL = "https://api.anthropic.com"
_MAX_BACKOFF_S = 8.0
# Mid-stream errors arrive on a 200 response, so they are told apart by error type.
_RETRYABLE_TYPES = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429, "timeout_error": 504}


@dataclass(frozen=True)
class RequestRecord:
    """What one successful request cost; ``duration_ms`` is wall time including retries."""

    model: str
    usage: TokenUsage
    duration_ms: int
    stop_reason: str | None


class _MidStreamFailure(Exception):
    """A retryable failure after the stream opened; wraps the SDK error."""


class AnthropicModel:
    """``await create(request)`` against the Messages API (or any compatible server)."""

    def __init__(
        self,
        client: anthropic.AsyncAnthropic | None = None,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 600,
        retry_backoff_s: float = 0.5,
        max_records: int = 1000,
        fallback_model: str | None = None,
    ) -> None:
        self.fallback_model = fallback_model
        """The model a request goes to once its own is overloaded past every retry (``--fallback-model``)."""
        if client is None and base_url and (api_key or auth_token):
            # Everything is known: the client is built where requests are sent (an agent
            # actor), not in a driver that only hands the model on.
            self._client = None
            self._options = (api_key, None if api_key else auth_token, base_url, max_retries, timeout_s)
        else:
            self._client = client or _make_client(api_key, auth_token, base_url, max_retries, timeout_s)
            # Resolved now (env included) so a copy in a Ray worker reaches the same server with the
            # same credential. The SDK refuses both at once, and uses the key when the env has both.
            key, token = self._client.api_key, None if self._client.api_key else self._client.auth_token
            self._options = (key, token, str(self._client.base_url), max_retries, timeout_s)
        self.max_retries = max_retries
        self.retry_backoff_s = retry_backoff_s
        self.requests: deque[RequestRecord] = deque(maxlen=max_records)

    @classmethod
    def from_env(cls, env: Mapping[str, str], **options: Any) -> "AnthropicModel":
        """A model whose credential (``ANTHROPIC_API_KEY``, else ``ANTHROPIC_AUTH_TOKEN``) and server
        (``ANTHROPIC_BASE_URL``) come from ``env`` alone, never from this process's environment."""
        api_key = env.get("ANTHROPIC_API_KEY") or None
        auth_token = None if api_key else env.get("ANTHROPIC_AUTH_TOKEN") or None
        if not (api_key or auth_token):
            raise UserError(
                "no Anthropic API key in the run's environment: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
                "or use --model scripted:PATH to run without the API"
            )
        base_url = env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        return cls(api_key=api_key, auth_token=auth_token, base_url=base_url, **options)

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            self._client = _shared_client(self._options)
        return self._client

    def __getstate__(self) -> dict[str, Any]:
        # The SDK client holds sockets of this process; a copy builds its own from _options.
        return {**self.__dict__, "_client": None}

    async def create(self, request: ModelRequest) -> Message:
        started = time.monotonic()
        try:
            message = await self._create_with_retries(request)
        except ModelAPIError as exc:
            if not (self.fallback_model and exc.status_code == 529 and request.model != self.fallback_model):
                raise
            # Claude Code's --fallback-model: an overloaded model's request goes to the fallback.
            message = await self._create_with_retries(request.model_copy(update={"model": self.fallback_model}))
        duration_ms = int((time.monotonic() - started) * 1000)
        usage = TokenUsage.of(message.usage)
        self.requests.append(RequestRecord(message.model, usage, duration_ms, message.stop_reason))
        return message

    async def _create_with_retries(self, request: ModelRequest) -> Message:
        attempt = 0
        while True:
            try:
                return await self._stream_once(request)
            except _MidStreamFailure as failure:
                if attempt >= self.max_retries:
                    raise _model_error(failure.__cause__, retries=attempt) from failure.__cause__
            await asyncio.sleep(self._backoff_s(attempt))
            attempt += 1

    async def _stream_once(self, request: ModelRequest) -> Message:
        opened = False
        try:
            async with self.client.messages.stream(**request.to_api_kwargs()) as stream:
                opened = True
                if request.on_stream is not None:
                    async for event in stream:
                        if event.type in RAW_STREAM_EVENTS:  # the SDK adds derived ones ("text", ...)
                            request.on_stream(event.model_dump(mode="json", exclude_none=True))
                final = await stream.get_final_message()
        except (anthropic.APIError, _TransportError) as exc:
            if opened and _retryable(exc):
                raise _MidStreamFailure() from exc
            # Failing to open: the SDK has already retried what is retryable.
            raise _model_error(exc, retries=self.max_retries if _retryable(exc) else 0) from exc
        if final.stop_reason is None:
            # A connection closed early (e.g. by a proxy) can end the body cleanly, cut short.
            raise _MidStreamFailure() from ConnectionError("the stream ended before message_stop")
        # covey's own Message (not the SDK's ParsedMessage): what the loop, transcripts and pickling use.
        message = Message.of(final)
        message.request_id = stream.request_id
        return message

    def _backoff_s(self, attempt: int) -> float:
        return min(self.retry_backoff_s * 2**attempt, _MAX_BACKOFF_S) * (1 - 0.25 * random.random())


RAW_STREAM_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                               "message_delta", "message_stop"})
"""The Messages API's own stream events: what Claude Code's ``stream_event`` lines carry."""

_CLIENTS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, anthropic.AsyncAnthropic]]" = (
    weakref.WeakKeyDictionary())
"""The SDK clients of this process, per event loop and settings. Every spec an agent actor
runs brings its own copy of the session's model; building a client (its TLS context, its
connection pool) for each would cost every spawn ~20-50 ms of CPU and a new connection."""


def _shared_client(options: tuple) -> anthropic.AsyncAnthropic:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not in a loop: nothing to share it with
        return _make_client(*options)
    clients = _CLIENTS.setdefault(loop, {})
    if (client := clients.get(options)) is None:
        client = clients[options] = _make_client(*options)
    return client


def _make_client(
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


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, (anthropic.APIConnectionError, _TransportError)):
        return True
    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500 or exc.type in _RETRYABLE_TYPES
    return False


def _model_error(exc: BaseException | None, *, retries: int) -> ModelAPIError:
    after = f" (gave up after {retries} retries)" if retries else ""
    if isinstance(exc, anthropic.APIStatusError):
        # A mid-stream error rides on a 200; report the status its type stands for.
        status = _RETRYABLE_TYPES.get(exc.type or "", exc.status_code) if exc.status_code == 200 else exc.status_code
        detail = exc.api_message or str(exc)
        hint = "; check ANTHROPIC_API_KEY" if status == 401 else ""
        text = f"Anthropic API error {status} ({exc.type or 'error'}): {detail}{after}{hint}"
        return ModelAPIError(_one_line(text), status)
    return ModelAPIError(_one_line(f"Anthropic API connection failed: {exc}{after}"), None)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _canned_stream(request: Any) -> Any:
    """A streamed reply of one text block and one tool call, as the Messages API sends it."""
    usage = {"input_tokens": 1, "output_tokens": 1}
    message: dict[str, Any] = {"id": "msg_warm", "type": "message", "role": "assistant", "model": "warm-up", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": usage}
    tool = {"type": "tool_use", "id": "toolu_warm", "name": "Glob", "input": {}}
    events = [
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": tool}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "input_json_delta", "partial_json": '{"pattern": "*"}'}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                           "usage": usage}),
        ("message_stop", {"type": "message_stop"}),
    ]
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    return _httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


def warm_up_offline() -> None:
    """Run one canned streamed exchange through the SDK and this adapter, without a network:
    a fresh process's first reply builds the SDK's validators and parsers (measured: ~1 s
    of CPU on 2 cores, paid between a new agent's first and second request otherwise)."""
    async def exchange() -> None:
        client = anthropic.AsyncAnthropic(api_key="warm-up", base_url="http://warm-up.invalid",
                                          http_client=_httpx.AsyncClient(transport=_httpx.MockTransport(_canned_stream)))
        model = AnthropicModel(client, max_retries=0)
        request = ModelRequest(model="warm-up", system=[{"type": "text", "text": "warm"}],
                               messages=[{"role": "user", "content": "warm"}], tools=[])
        await model.create(request)
        await client.close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(exchange())
        return
    thread = threading.Thread(target=asyncio.run, args=(exchange(),))  # not inside a running loop
    thread.start()
    thread.join()
