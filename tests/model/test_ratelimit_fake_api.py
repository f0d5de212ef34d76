"""The rate-limited fake API, driven by the real ``anthropic`` client (no retries), and the rate
scheduler learning its limits from the fake's headers alone."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from covey.model.base import TokenUsage
from covey.ratelimit.ports import AdmitRequest, Admitted, Wait
from covey.ratelimit.scheduler import RateScheduler
from covey.ratelimit.signals import identity_for, parse_rate_headers
from tests.fake_ratelimited_api import FakeRateLimitedAPI

T0 = 1_800_000_000.0
MODEL = "claude-sonnet-4-6"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def client(api: FakeRateLimitedAPI) -> anthropic.Anthropic:
    """One client per test and server (building one costs more than a request)."""
    if getattr(api, "client", None) is None:
        setattr(api, "client", anthropic.Anthropic(base_url=api.url, api_key="test-key-not-real", max_retries=0))
    return getattr(api, "client")


def send(api: FakeRateLimitedAPI, text: str = "hi", max_tokens: int = 16, **options: Any) -> Any:
    return client(api).messages.with_raw_response.create(
        model=MODEL, max_tokens=max_tokens, messages=[{"role": "user", "content": text}], **options)


def test_requests_bucket_429s_with_retry_after_and_headers_on_every_reply() -> None:
    clock = Clock()
    with FakeRateLimitedAPI(requests_per_minute=3, clock=clock) as api:
        remaining = []
        for _ in range(3):
            raw = send(api)
            assert raw.parse().content[0].text == "ok"
            assert raw.headers["anthropic-ratelimit-requests-limit"] == "3"
            remaining.append(raw.headers["anthropic-ratelimit-requests-remaining"])
        assert remaining == ["2", "1", "0"]
        assert parse_rate_headers(raw.headers)["requests"].reset_at == T0 + 60
        with pytest.raises(anthropic.RateLimitError) as refused:
            send(api)
        assert refused.value.status_code == 429 and refused.value.response.headers["retry-after"] == "20"
        assert refused.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]  # the body is JSON
        assert "3 requests per minute" in str(refused.value)
        assert refused.value.response.headers["anthropic-ratelimit-requests-remaining"] == "0"
        clock.now += 19  # a bucket refills continuously: not yet one whole request
        with pytest.raises(anthropic.RateLimitError):
            send(api)
        clock.now += 1
        assert send(api).headers["anthropic-ratelimit-requests-remaining"] == "0"
        assert (api.count(200), api.count(429)) == (4, 2)


def test_input_and_output_token_buckets() -> None:
    clock = Clock()
    with FakeRateLimitedAPI(input_tokens_per_minute=600, output_tokens_per_minute=1000, clock=clock) as api:
        first = send(api, max_tokens=900)
        # Output is counted as max_tokens, then corrected to the 5 tokens the reply used.
        assert first.headers["anthropic-ratelimit-output-tokens-remaining"] == "995"
        assert send(api, max_tokens=900).headers["anthropic-ratelimit-output-tokens-remaining"] == "990"
        with pytest.raises(anthropic.RateLimitError, match="1000 output tokens per minute"):
            send(api, max_tokens=999)
        with pytest.raises(anthropic.RateLimitError, match="600 input tokens per minute") as refused:
            send(api, text="x" * 4000)
        assert int(refused.value.response.headers["retry-after"]) >= 1
        left = int(refused.value.response.headers["anthropic-ratelimit-input-tokens-remaining"])
        assert left == 600 - 2 * api.log[0].input_tokens


def test_cache_reads_are_left_out_of_the_input_bucket_and_reported() -> None:
    with FakeRateLimitedAPI(input_tokens_per_minute=600, count_input=lambda body: 500,
                            cache_reads=lambda body: 450, clock=Clock()) as api:
        for _ in range(3):  # 3 × 500 would not fit in 600; 3 × 50 does
            raw = send(api)
        usage = raw.parse().usage
        assert (usage.input_tokens, usage.cache_read_input_tokens) == (50, 450)
        assert raw.headers["anthropic-ratelimit-input-tokens-remaining"] == "450"
        assert [entry.input_tokens for entry in api.log] == [50, 50, 50]


def test_overload_bursts_answer_529_then_serve() -> None:
    with FakeRateLimitedAPI(requests_per_minute=100) as api:
        api.overload(2, retry_after_s=3)
        for _ in range(2):
            with pytest.raises(anthropic.APIStatusError) as overloaded:
                send(api)
            assert overloaded.value.status_code == 529 and overloaded.value.response.headers["retry-after"] == "3"
            assert "anthropic-ratelimit-requests-limit" in overloaded.value.response.headers
        assert send(api).status_code == 200


def test_streamed_replies_carry_the_headers() -> None:
    with FakeRateLimitedAPI(requests_per_minute=5) as api:
        with client(api).messages.with_streaming_response.create(
                model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}], stream=True) as raw:
            assert raw.headers["anthropic-ratelimit-requests-remaining"] == "4"
            assert any(b"message_stop" in chunk for chunk in raw.iter_bytes())


def test_the_scheduler_learns_the_limits_from_headers_and_gets_no_429() -> None:
    clock = Clock()
    sched = RateScheduler(identity_for("http://127.0.0.1", "test-key-not-real", MODEL), clock=clock)
    with FakeRateLimitedAPI(requests_per_minute=4, clock=clock) as api:
        for i in range(12):
            request = AdmitRequest(f"r{i}", input_tokens=20, max_tokens=16)
            while isinstance(decision := sched.admit(request), Wait):
                clock.now = decision.until
            assert isinstance(decision, Admitted)
            raw = send(api)
            reply = raw.parse()
            sched.record_reply(request.request_id, headers=raw.headers, usage=TokenUsage.of(reply.usage))
        assert (api.count(200), api.count(429)) == (12, 0)
        # Four at once (the bucket), then one each 15 s: no slower than the API allows.
        assert clock.now - T0 == pytest.approx(8 * 15)


def test_the_scheduler_waits_out_a_429_for_everybody() -> None:
    clock = Clock()
    sched = RateScheduler(identity_for("http://127.0.0.1", "k", MODEL), clock=clock)
    with FakeRateLimitedAPI(requests_per_minute=1, clock=clock) as api:
        send(api)  # someone else used the bucket: the scheduler has not seen it
        first = AdmitRequest("a", input_tokens=20, max_tokens=16)
        assert isinstance(sched.admit(first), Admitted)
        with pytest.raises(anthropic.RateLimitError) as refused:
            send(api)
        sched.record_refusal("a", 429, refused.value.response.headers)
        for request in (first, AdmitRequest("b", input_tokens=20, max_tokens=16)):
            decision = sched.admit(request)
            assert isinstance(decision, Wait) and decision.until == pytest.approx(T0 + 60)
        clock.now = T0 + 60
        assert isinstance(sched.admit(first), Admitted)
        assert send(api).status_code == 200
