"""A fake Messages API that enforces per-minute limits the way the real one does: stdlib only, on
127.0.0.1, port 0.

Three token buckets (requests, input tokens, output tokens per minute; each optional), each
holding N and refilling continuously at N per minute. A request takes 1 request, its input
tokens (the whole prompt's JSON length / 4, or ``count_input``) and its ``max_tokens`` of output;
the output is corrected to what the reply used once it is written, as the API does. A request
that does not fit gets 429 ``rate_limit_error`` with ``retry-after`` (whole seconds until it
fits). A request larger than a whole bucket is let through once that bucket is full (what the
scheduler in covey/ratelimit/scheduler.py assumes of the API). Every reply, errors included, carries
``anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}`` for the
limits set. ``overload(n)`` answers the next n requests 529 ``overloaded_error``.

Time is ``clock()`` (epoch seconds; default ``time.time``): a test passes a fake clock to move
the buckets without sleeping.
"""

from __future__ import annotations

import json
import math
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Iterator

import pytest

from tests.fake_messages_api import LoopbackServer, _message, _sse_events

_HEADER_PARTS = {"requests": "requests", "input_tokens": "input-tokens", "output_tokens": "output-tokens"}
_LABELS = {"requests": "requests", "input_tokens": "input tokens", "output_tokens": "output tokens"}


def prompt_tokens(body: dict[str, Any]) -> int:
    """A rough count of a request's input tokens: its prompt's JSON length / 4."""
    prompt = json.dumps([body.get("system", ""), body.get("messages", []), body.get("tools", [])])
    return max(len(prompt) // 4, 1)


@dataclass
class _Bucket:
    capacity: float
    level: float
    at: float

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + self.capacity / 60 * max(now - self.at, 0.0))
        self.at = max(now, self.at)

    def seconds_to(self, amount: float) -> float:
        return max(min(amount, self.capacity) - self.level, 0.0) / (self.capacity / 60)


@dataclass
class Served:
    """One answered request, as the fake saw it."""

    at: float
    status: int
    input_tokens: int
    max_tokens: int
    headers: dict[str, str] = field(default_factory=dict)


class FakeRateLimitedAPI:
    """The fake server; use as a context manager (or through the ``ratelimited_api`` fixture)."""

    def __init__(self, *, requests_per_minute: int | None = None, input_tokens_per_minute: int | None = None,
                 output_tokens_per_minute: int | None = None, output_tokens: int = 5,
                 count_input: Callable[[dict[str, Any]], int] = prompt_tokens,
                 cache_reads: Callable[[dict[str, Any]], int] | None = None,
                 clock: Callable[[], float] = time.time,
                 reply: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.clock = clock
        now = clock()
        limits = {"requests": requests_per_minute, "input_tokens": input_tokens_per_minute,
                  "output_tokens": output_tokens_per_minute}
        self.buckets = {name: _Bucket(float(limit), float(limit), now) for name, limit in limits.items() if limit}
        self.output_tokens = output_tokens
        self.count_input = count_input
        self.cache_reads = cache_reads
        """The part of a prompt's input tokens its cache serves (a function of the body, so the same
        on every call): left out of the input bucket, as the API does on current models, and
        reported in the reply's usage as ``cache_read_input_tokens``."""
        self.reply = reply or (lambda body: {"text": "ok"})
        """What a served request answers (``tests/fake_messages_api.py``'s reply shape: ``text`` or
        ``content``); called with the request body, after its tokens were taken."""
        self.log: list[Served] = []
        self._overloads: list[tuple[int, Callable[[dict[str, Any]], bool] | None]] = []
        self._lock = threading.Lock()
        self._server = LoopbackServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "FakeRateLimitedAPI":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def overload(self, count: int, retry_after_s: int = 1,
                 only: Callable[[dict[str, Any]], bool] | None = None) -> None:
        """Answer the next ``count`` requests 529 ``overloaded_error`` (a burst); with ``only``,
        the next ``count`` requests whose body it accepts (the others are served as usual)."""
        with self._lock:
            self._overloads.extend([(retry_after_s, only)] * count)

    def count(self, status: int) -> int:
        return sum(entry.status == status for entry in self.log)

    def input_of(self, body: dict[str, Any]) -> tuple[int, int]:
        """(input tokens counted toward the limit, cache reads) of one request."""
        read = min(self.cache_reads(body), self.count_input(body)) if self.cache_reads else 0
        return self.count_input(body) - read, read

    def decide(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None, dict[str, str]]:
        """(status, error body or None, headers) for one request; takes from the buckets if it is served."""
        input_tokens, max_tokens = self.input_of(body)[0], int(body.get("max_tokens", 0))
        needs = {"requests": 1, "input_tokens": input_tokens, "output_tokens": max_tokens}
        with self._lock:
            now = self.clock()
            for bucket in self.buckets.values():
                bucket.refill(now)
            status, error, extra = 200, None, {}
            if self._overloads and (self._overloads[0][1] is None or self._overloads[0][1](body)):
                extra["retry-after"] = str(self._overloads.pop(0)[0])
                status, error = 529, _error("overloaded_error", "Overloaded")
            elif short := {name: self.buckets[name].seconds_to(needs[name]) for name in self.buckets
                           if self.buckets[name].seconds_to(needs[name]) > 0}:
                name = max(short, key=lambda key: short[key])
                extra["retry-after"] = str(max(math.ceil(short[name]), 1))
                status, error = 429, _error("rate_limit_error", f"This request would exceed your organization's "
                                            f"rate limit of {self.buckets[name].capacity:.0f} {_LABELS[name]} per minute.")
            else:
                for name, bucket in self.buckets.items():
                    bucket.level -= needs[name]
                # The reply is written at once: the output estimate is corrected now.
                if "output_tokens" in self.buckets:
                    bucket = self.buckets["output_tokens"]
                    bucket.level = min(bucket.capacity, bucket.level + max_tokens - self.output_tokens)
            headers = {**self._rate_headers(now), **extra, "request-id": f"req_{uuid.uuid4().hex[:24]}"}
            self.log.append(Served(now, status, input_tokens, max_tokens, headers))
        return status, error, headers

    def _rate_headers(self, now: float) -> dict[str, str]:
        headers = {}
        for name, bucket in self.buckets.items():
            prefix = f"anthropic-ratelimit-{_HEADER_PARTS[name]}-"
            full_at = now + (bucket.capacity - bucket.level) / (bucket.capacity / 60)
            headers[prefix + "limit"] = f"{bucket.capacity:.0f}"
            headers[prefix + "remaining"] = str(max(math.floor(bucket.level), 0))
            headers[prefix + "reset"] = datetime.fromtimestamp(math.ceil(full_at), timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ")
        return headers


def _error(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _handler_for(api: FakeRateLimitedAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:  # keep pytest output clean
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, error, headers = api.decide(body)
            if error is not None:
                self._send(status, json.dumps(error).encode(), "application/json", headers)
                return
            counted, read = api.input_of(body)
            usage = {"input_tokens": counted, "cache_read_input_tokens": read, "output_tokens": api.output_tokens}
            message = _message({**api.reply(body), "usage": usage}, body["model"])
            if not body.get("stream"):
                self._send(200, json.dumps(message).encode(), "application/json", headers)
                return
            self._send(200, b"".join(_sse(_sse_events(message))), "text/event-stream", headers)

        def _send(self, status: int, data: bytes, content_type: str, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _sse(events: Iterator[tuple[str, dict[str, Any]]]) -> Iterator[bytes]:
    for name, data in events:
        yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


@pytest.fixture
def ratelimited_api() -> Iterator[FakeRateLimitedAPI]:
    """A running FakeRateLimitedAPI at 60 requests per minute (tests build their own for other limits)."""
    with FakeRateLimitedAPI(requests_per_minute=60) as api:
        yield api
