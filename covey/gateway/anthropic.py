"""The real model: the Messages API through ``anthropic.AsyncAnthropic``, streamed.

Retries happen in two places, both with exponential backoff and jitter:

- Opening the stream (the HTTP status): the SDK's own loop (``max_retries``)
  retries 408/409/429/5xx incl. 529 overload and honours ``retry-after``.
- Mid-stream (an ``error`` event such as ``overloaded_error`` after a 200, or a
  dropped connection): the SDK cannot retry once the body has begun, so covey
  sends the whole request again, up to ``max_retries`` times, after the reply's
  ``retry-after`` where it has one (as the SDK does), else its own backoff.

With an ``Admission`` (``with_admission``: the shared rate scheduler, docs/rate-limits.md),
each request first waits for its turn, and every reply's ``anthropic-ratelimit-*`` headers
and usage go back to it. A 429/529 is then not retried by the SDK: it is recorded and the
request waits (the scheduler's estimate, or ``retry-after``) until its patience runs out,
when it fails with ``RateLimitRefused`` naming the limit. Other retryable failures are then
retried by covey alone, as mid-stream ones are.

Anything else (400, 401, 403, 404, 413) fails at once. Every failure surfaces as a
one-line ``ModelAPIError`` with the status code.

Usage is recorded per request in ``self.requests`` (the last ``max_records``);
callers that roll usage up per agent read ``message.usage`` from the reply instead.

A model pickles as its ``AnthropicConfig`` (no SDK import where it lands); ``AnthropicModel.of``
is a process's one model per config (an agent without Ray, or the node's model gateway, which
sends every agent's requests under Ray: ``covey.gateway.actor``).
"""

from __future__ import annotations

import asyncio
import copy
import time
import uuid
from collections import deque
from dataclasses import dataclass, fields
from typing import Any, Awaitable, Callable, Mapping

import anthropic

from covey.errors import ModelAPIError
from covey.gateway.api_errors import TransportError as _TransportError
from covey.gateway.api_errors import backoff_s, server_retry_after_s
from covey.gateway.api_errors import model_error as _model_error, retryable as _retryable
from covey.gateway.sdk_clients import make_client, open_stream, shared_client
from covey.model.anthropic_config import DEFAULT_BASE_URL, AnthropicConfig
from covey.model.base import ModelRequest, TokenUsage
from covey.model.messages import Message
from covey.ratelimit.admission import Admission, admit_request_for, wait_for_turn
from covey.ratelimit.cache import CachedPrefixes
from covey.ratelimit.signals import Identity, identity_for



@dataclass(frozen=True)
class RequestRecord:
    """What one successful request cost; ``duration_ms`` is wall time including retries."""

    model: str
    usage: TokenUsage
    duration_ms: int
    stop_reason: str | None


class _MidStreamFailure(Exception):
    """A retryable failure covey retries itself (after the stream opened, or any with an
    admission); wraps the SDK error. ``retry_after_s``: the server's ``retry-after``, if it sent one."""

    def __init__(self, retry_after_s: float | None = None) -> None:
        super().__init__()
        self.retry_after_s = retry_after_s


class _RateRefusal(Exception):
    """With an admission: the API refused to open the stream with 429 or 529."""

    def __init__(self, status: int, headers: dict[str, str]) -> None:
        super().__init__(status)
        self.status = status
        self.headers = headers


class AnthropicModel:
    """``await create(request)`` against the Messages API (or any compatible server)."""

    # Set by ``with_admission`` on a copy; never pickled (they live where they were given),
    # so a copy elsewhere, or one pickled before they existed, has these defaults.
    admission: Admission | None = None
    """Consulted before each request."""
    _quiet: anthropic.AsyncAnthropic | None = None
    """The client without the SDK's retries, for requests an admission paces."""
    _pacing: tuple[Callable[[], float], Callable[[float], Awaitable[object]]] = (time.time, asyncio.sleep)

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
            self._client = client or make_client(api_key, auth_token, base_url, max_retries, timeout_s)
            # Resolved now (env included) so a copy in a Ray worker reaches the same server with the
            # same credential. The SDK refuses both at once, and uses the key when the env has both.
            key, token = self._client.api_key, None if self._client.api_key else self._client.auth_token
            self._options = (key, token, str(self._client.base_url), max_retries, timeout_s)
        self.max_retries = max_retries
        self.retry_backoff_s = retry_backoff_s
        self.requests: deque[RequestRecord] = deque(maxlen=max_records)
        self._cached_prefixes = CachedPrefixes()  # shared by this model's copies (``with_admission``)

    @classmethod
    def from_env(cls, env: Mapping[str, str], **options: Any) -> "AnthropicModel":
        """A model whose credential (``ANTHROPIC_API_KEY``, else ``ANTHROPIC_AUTH_TOKEN``) and server
        (``ANTHROPIC_BASE_URL``) come from ``env`` alone, never from this process's environment."""
        config = AnthropicConfig.from_env(env)
        return cls(api_key=config.api_key, auth_token=config.auth_token, base_url=config.base_url, **options)

    @classmethod
    def of(cls, config: AnthropicConfig) -> "AnthropicModel":
        """This process's model for ``config`` (a model that travelled), built once: one SDK
        client set per credential and server, however many runs (or a gateway's agents) use it."""
        if (found := _MODELS.get(config)) is None:
            found = _MODELS[config] = cls(
                api_key=config.api_key, auth_token=config.auth_token, base_url=config.base_url,
                max_retries=config.max_retries, timeout_s=config.timeout_s, retry_backoff_s=config.retry_backoff_s,
                fallback_model=config.fallback_model)
        return found

    @property
    def config(self) -> AnthropicConfig:
        """What this model is built from: how it travels to another process (``__reduce__``)."""
        key, token, base_url, max_retries, timeout_s = self._options
        return AnthropicConfig(key, token, base_url or DEFAULT_BASE_URL, max_retries, timeout_s,
                               self.retry_backoff_s, self.fallback_model)

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            self._client = shared_client(self._options)
        return self._client

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # A copy elsewhere is its config: unpickling it imports no SDK (an agent actor sends
        # through its node's gateway), and it builds its own client (the SDK's holds this
        # process's sockets) with the same server and credential. Its admission stays here.
        config = self.config
        return (AnthropicConfig, tuple(getattr(config, f.name) for f in fields(AnthropicConfig)))

    def __copy__(self) -> "AnthropicModel":
        copied = object.__new__(AnthropicModel)
        copied.__dict__.update(self.__dict__)
        return copied

    def with_admission(self, admission: Admission | None, *, clock: Callable[[], float] = time.time,
                       sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> "AnthropicModel":
        """A copy (sharing this one's client and records) whose requests wait for ``admission``
        (``clock`` and ``sleep``: how it waits, a test's fake time)."""
        paced = copy.copy(self)
        paced.admission, paced._pacing = admission, (clock, sleep)
        if self._quiet is None and admission is not None:  # made once, shared by the copies (~0.15 ms each)
            self._quiet = paced._quiet = self.client.with_options(max_retries=0)
        return paced

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
        if self.admission is not None:
            return await self._create_admitted(request, self.admission)
        attempt = 0
        while True:
            try:
                return await self._stream_once(request)
            except _MidStreamFailure as failure:
                if attempt >= self.max_retries:
                    raise _model_error(failure.__cause__, retries=attempt) from failure.__cause__
                await asyncio.sleep(self._backoff_s(attempt, failure.retry_after_s))
            attempt += 1

    async def _create_admitted(self, request: ModelRequest, admission: Admission) -> Message:
        """Wait for the turn, send, tell the admission how it went; a 429/529 waits again in
        its place (the scheduler pauses everybody for its ``retry-after``)."""
        identity, now = self._identity(request.model), self._pacing[0]()
        cached = self._cached_prefixes.expected_read(request.agent_id, now)
        ticket = admit_request_for(request, f"mreq_{uuid.uuid4().hex}", cached)
        attempt = 0
        while True:
            await wait_for_turn(admission, identity, ticket, clock=self._pacing[0], sleep=self._pacing[1])
            headers: dict[str, str] = {}
            try:
                message = await self._stream_once(request, headers)
            except _RateRefusal as refusal:
                await admission.record_refusal(identity, ticket.request_id, refusal.status, refusal.headers)
                if refusal.status == 529 and self.fallback_model and request.model != self.fallback_model:
                    admission.cancel(identity, ticket.request_id)  # --fallback-model: ``create`` fails over now
                    raise _model_error(refusal.__cause__, retries=0) from refusal.__cause__
                continue
            except _MidStreamFailure as failure:
                admission.cancel(identity, ticket.request_id)
                if attempt >= self.max_retries:
                    raise _model_error(failure.__cause__, retries=attempt) from failure.__cause__
                await self._pacing[1](self._backoff_s(attempt, failure.retry_after_s))
            except BaseException:
                admission.cancel(identity, ticket.request_id)
                raise
            else:
                usage = TokenUsage.of(message.usage)
                self._cached_prefixes.record(request.agent_id, usage, self._pacing[0]())
                await admission.record_reply(identity, ticket.request_id, headers, usage)
                return message
            attempt += 1

    def _identity(self, model: str) -> Identity:
        """Whose limits a request to ``model`` takes from (the credential only as a hash)."""
        key, token, base_url = self._options[:3]
        return identity_for(base_url or DEFAULT_BASE_URL, key or token or "", model)

    def _sending_client(self) -> anthropic.AsyncAnthropic:
        if self.admission is None:
            return self.client
        if self._quiet is None:  # the SDK would retry 429s behind the scheduler's back
            self._quiet = self.client.with_options(max_retries=0)
        return self._quiet

    async def _stream_once(self, request: ModelRequest, headers: dict[str, str] | None = None) -> Message:
        """One streamed request; ``headers`` gets the reply's (for the admission)."""
        opened, paced = False, self.admission is not None
        try:
            async with open_stream(self._sending_client(), request.to_api_kwargs()) as stream:
                opened = True
                if headers is not None:
                    headers.update(stream.response.headers)
                if request.on_stream is not None:
                    async for event in stream:
                        if event.type in RAW_STREAM_EVENTS:  # the SDK adds derived ones ("text", ...)
                            request.on_stream(event.model_dump(mode="json", exclude_none=True))
                final = await stream.get_final_message()
        except (anthropic.APIError, _TransportError) as exc:
            if paced and not opened and isinstance(exc, anthropic.APIStatusError) and exc.status_code in (429, 529):
                raise _RateRefusal(exc.status_code, dict(exc.response.headers)) from exc
            if (opened or paced) and _retryable(exc):  # paced: the SDK did not retry it
                raise _MidStreamFailure(server_retry_after_s(exc)) from exc
            # Failing to open: the SDK has already retried what is retryable.
            raise _model_error(exc, retries=self.max_retries if _retryable(exc) else 0) from exc
        if final.stop_reason is None:
            # A connection closed early (e.g. by a proxy) can end the body cleanly, cut short.
            raise _MidStreamFailure() from ConnectionError("the stream ended before message_stop")
        # covey's own Message (not the SDK's ParsedMessage): what the loop, transcripts and pickling use.
        message = Message.of(final)
        message.request_id = stream.request_id
        return message

    def _backoff_s(self, attempt: int, server_s: float | None = None) -> float:
        return backoff_s(self.retry_backoff_s, attempt, server_s)


_MODELS: dict[AnthropicConfig, AnthropicModel] = {}
"""This process's models by config (``AnthropicModel.of``)."""

RAW_STREAM_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                               "message_delta", "message_stop"})
"""The Messages API's own stream events: what Claude Code's ``stream_event`` lines carry."""

def warm_up_offline() -> None:
    """A fresh process's first reply, offline (``covey.gateway.warmup``): it builds the
    SDK's validators and parsers, ~1 s of CPU otherwise paid by a new agent's first request."""
    from covey.gateway.warmup import warm_up_with

    warm_up_with(lambda client: AnthropicModel(client, max_retries=0))
