"""How the Messages API's failures are told apart (retryable or not) and reported: one line, the
status code, as ``ModelAPIError``."""

from __future__ import annotations

import random
import time

import anthropic

from covey.errors import ModelAPIError
from covey.ratelimit.signals import retry_after_s

try:  # A dropped stream raises the HTTP library's error unwrapped; anthropic 2.x uses httpx2.
    import httpx2 as _httpx
except ImportError:
    import httpx as _httpx  # type: ignore[no-redef]  # the same API under its older name
TransportError = _httpx.TransportError

# Mid-stream errors arrive on a 200 response, so they are told apart by error type.
_RETRYABLE_TYPES = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429, "timeout_error": 504}


def retryable(exc: Exception) -> bool:
    if isinstance(exc, (anthropic.APIConnectionError, TransportError)):
        return True
    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500 or exc.type in _RETRYABLE_TYPES
    return False


MAX_BACKOFF_S = 8.0
MAX_SERVER_RETRY_AFTER_S = 60.0
"""A server's ``retry-after`` longer than this is not waited for as is (the SDK's own bound)."""


def backoff_s(base_s: float, attempt: int, server_s: float | None = None) -> float:
    """How long covey waits before its retry ``attempt`` (0 first): the server's ``retry-after``
    where it sent a usable one (as the SDK honours it), else exponential backoff with jitter."""
    if server_s is not None and server_s <= MAX_SERVER_RETRY_AFTER_S:
        return server_s
    return float(min(base_s * 2**attempt, MAX_BACKOFF_S) * (1 - 0.25 * random.random()))


def server_retry_after_s(exc: BaseException) -> float | None:
    """The ``retry-after`` (or ``retry-after-ms``) of a failed reply, if it had one."""
    if isinstance(exc, anthropic.APIStatusError):
        return retry_after_s(exc.response.headers, time.time())
    return None


def model_error(exc: BaseException | None, *, retries: int) -> ModelAPIError:
    after = f" (gave up after {retries} retries)" if retries else ""
    if isinstance(exc, anthropic.APIStatusError):
        # A mid-stream error rides on a 200; report the status its type stands for.
        status = _RETRYABLE_TYPES.get(exc.type or "", exc.status_code) if exc.status_code == 200 else exc.status_code
        detail = exc.api_message or str(exc)
        hint = "; check ANTHROPIC_API_KEY" if status == 401 else ""
        text = f"Anthropic API error {status} ({exc.type or 'error'}): {detail}{after}{hint}"
        body = exc.body if isinstance(exc.body, dict) else None
        return ModelAPIError(_one_line(text), status, body)
    return ModelAPIError(_one_line(f"Anthropic API connection failed: {exc}{after}"), None)


def _one_line(text: str) -> str:
    return " ".join(text.split())
