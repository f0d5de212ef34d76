"""The real model with an admission (a plain scheduler in this process, no Ray), against the
rate-limited fake API through the real ``anthropic`` SDK: it asks before each request, tells
the scheduler every reply's headers and usage, waits out 429/529 instead of failing, and fails
with the limit named once its patience runs out. Time is a fake clock the waits move."""

from __future__ import annotations

import asyncio
import pickle

import anthropic
import pytest

from covey.gateway.anthropic import AnthropicModel
from covey.model.base import ModelRequest
from covey.ratelimit.admission import LocalAdmission, wait_for_turn
from covey.ratelimit.ports import AdmitRequest, RateLimitRefused, RateRefused, Wait
from covey.ratelimit.signals import RateLimitSettings, identity_for
from tests.fake_ratelimited_api import FakeRateLimitedAPI

T0 = 1_800_000_000.0
MODEL = "claude-sonnet-4-6"
KEY = "test-key-not-real"


class Clock:
    def __init__(self) -> None:
        self.now = T0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def paced(api: FakeRateLimitedAPI, clock: Clock, settings: RateLimitSettings | None = None,
          ) -> tuple[AnthropicModel, LocalAdmission, list[Wait | RateRefused]]:
    waits: list[Wait | RateRefused] = []
    admission = LocalAdmission(settings, clock=clock, on_wait=waits.append)
    model = AnthropicModel(api_key=KEY, base_url=api.url, max_retries=4, retry_backoff_s=0.001)
    return model.with_admission(admission, clock=clock, sleep=clock.sleep), admission, waits


def request(text: str = "hi") -> ModelRequest:
    return ModelRequest(model=MODEL, messages=[{"role": "user", "content": text}], max_tokens=16, agent_id="a1")


def use_up(api: FakeRateLimitedAPI, count: int) -> None:
    """Someone else (not through the scheduler) takes ``count`` requests of the bucket."""
    client = anthropic.Anthropic(base_url=api.url, api_key=KEY, max_retries=0)
    for _ in range(count):
        client.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "x"}])


def test_it_learns_the_limit_from_the_headers_and_never_gets_a_429() -> None:
    clock = Clock()
    with FakeRateLimitedAPI(requests_per_minute=3, clock=clock) as api:
        model, admission, waits = paced(api, clock)

        async def run() -> None:
            for _ in range(7):
                assert (await model.create(request())).content[0].text == "ok"

        asyncio.run(run())
        assert (api.count(200), api.count(429)) == (7, 0)
        # Three at once (the bucket), then one each 20 s: as fast as the API allows.
        assert clock.now - T0 == pytest.approx(4 * 20)
        bucket = admission.scheduler(identity_for(api.url, KEY, MODEL)).buckets["requests"]
        assert bucket.capacity == 3
        assert waits and all(isinstance(w, Wait) and w.cause == "queue" and w.limit == "requests" for w in waits)


def test_the_reply_usage_corrects_the_estimates() -> None:
    clock = Clock()
    with FakeRateLimitedAPI(input_tokens_per_minute=10_000, output_tokens_per_minute=1_000, clock=clock) as api:
        model, admission, _ = paced(api, clock)
        asyncio.run(model.create(request("x" * 400)))
        buckets = admission.scheduler(identity_for(api.url, KEY, MODEL)).buckets
        # max_tokens (16) was taken, the reply's 5 output tokens are what stays taken.
        assert buckets["output_tokens"].consumed(clock.now) == pytest.approx(5)
        assert buckets["input_tokens"].consumed(clock.now) == pytest.approx(api.log[-1].input_tokens)


def test_a_429_is_recorded_and_waited_out_not_retried_by_the_sdk() -> None:
    clock = Clock()
    with FakeRateLimitedAPI(requests_per_minute=2, clock=clock) as api:
        use_up(api, 2)
        model, _, waits = paced(api, clock)
        assert asyncio.run(model.create(request())).content[0].text == "ok"
        assert (api.count(429), api.count(200)) == (1, 3)  # one refusal: no SDK retry behind its back
        assert clock.now - T0 == pytest.approx(30)  # retry-after: 30 s for one request of 2 per minute
        refused_wait = [w for w in waits if isinstance(w, Wait) and w.cause == "rate_limit_error"]
        assert refused_wait and refused_wait[0].limit == "requests"


def test_a_529_is_waited_out_for_its_retry_after() -> None:
    clock = Clock()
    with FakeRateLimitedAPI(requests_per_minute=100, clock=clock) as api:
        api.overload(1, retry_after_s=3)
        model, _, waits = paced(api, clock)
        assert asyncio.run(model.create(request())).content[0].text == "ok"
        assert (api.count(529), api.count(200)) == (1, 1)
        assert clock.now - T0 == pytest.approx(3)
        assert [w.cause for w in waits] == ["overloaded_error"]


def test_with_a_fallback_model_a_529_fails_over_at_once() -> None:
    clock = Clock()
    with FakeRateLimitedAPI(requests_per_minute=100, clock=clock) as api:
        api.overload(1, retry_after_s=3)
        model, admission, _ = paced(api, clock)
        model.fallback_model = "claude-haiku-4-5"
        message = asyncio.run(model.create(request()))
        assert message.model == "claude-haiku-4-5" and clock.now == T0
        overloaded = admission.scheduler(identity_for(api.url, KEY, MODEL)).snapshot()
        assert overloaded.queued == 0 and overloaded.paused_until == pytest.approx(T0 + 3)


def test_past_its_patience_it_fails_naming_the_limit() -> None:
    clock = Clock()
    with FakeRateLimitedAPI(requests_per_minute=1, clock=clock) as api:
        use_up(api, 1)
        model, _, waits = paced(api, clock, RateLimitSettings(patience_s=30))
        with pytest.raises(RateLimitRefused) as refused:
            asyncio.run(model.create(request()))
        assert refused.value.rate_limit == "requests"
        assert "requests per minute" in str(refused.value) and "patience of 30 s" in str(refused.value)
        assert api.count(429) == 1 and isinstance(waits[-1], RateRefused)
        assert clock.now - T0 < 30  # it did not sleep to find out


def test_a_failure_that_is_not_a_rate_limit_gives_its_place_up() -> None:
    clock = Clock()
    with FakeRateLimitedAPI(requests_per_minute=5, clock=clock) as api:
        model, admission, _ = paced(api, clock)

        def broken(event: object) -> None:
            raise RuntimeError("the reader failed")

        with pytest.raises(RuntimeError, match="the reader failed"):
            asyncio.run(model.create(request().model_copy(update={"on_stream": broken})))
        scheduler = admission.scheduler(identity_for(api.url, KEY, MODEL))
        assert scheduler.snapshot().in_flight == 0 and scheduler.snapshot().queued == 0


def test_a_cancelled_wait_gives_its_place_up() -> None:
    clock = Clock()
    admission = LocalAdmission(RateLimitSettings(requests_per_minute=1), clock=clock)
    identity = identity_for("http://127.0.0.1", KEY, MODEL)

    async def run() -> None:
        await wait_for_turn(admission, identity, AdmitRequest("first", 10, 16), clock=clock, sleep=clock.sleep)
        never = asyncio.Event()
        waiting = asyncio.ensure_future(wait_for_turn(admission, identity, AdmitRequest("second", 10, 16),
                                                      clock=clock, sleep=lambda _s: never.wait()))
        await asyncio.sleep(0.01)
        assert admission.scheduler(identity).snapshot().queued == 1
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(run())
    assert admission.scheduler(identity).snapshot().queued == 0


def test_the_admission_does_not_travel_with_the_model() -> None:
    model = AnthropicModel(api_key=KEY, base_url="http://127.0.0.1:1").with_admission(LocalAdmission())
    assert model.admission is not None
    copied = pickle.loads(pickle.dumps(model))  # its config: no admission, the same server and credential
    assert copied == model.config and AnthropicModel.of(copied).admission is None


@pytest.mark.parametrize(("retry_after_ms", "waited"), [(250, [0.25, 0.25]), (120_000, None)])
def test_a_5xx_is_retried_after_the_servers_retry_after_when_it_sent_a_usable_one(retry_after_ms, waited) -> None:
    """As the SDK does: the reply's ``retry-after-ms`` is the wait (not covey's own backoff),
    unless it is longer than a minute, when the backoff (here 5 s, doubling) applies."""
    from tests.fake_messages_api import FakeMessagesAPI

    clock = Clock()
    replies = [("error", 500, None), ("error", 503, None), {"text": "ok"}]
    with FakeMessagesAPI(replies=replies, retry_after_ms=retry_after_ms) as api:
        admission = LocalAdmission(None, clock=clock)
        model = AnthropicModel(api_key=KEY, base_url=api.url, max_retries=4, retry_backoff_s=5.0)
        model = model.with_admission(admission, clock=clock, sleep=clock.sleep)
        assert asyncio.run(model.create(request())).content[0].text == "ok"
    backoffs = [s for s in clock.slept if s > 0]
    if waited is not None:
        assert backoffs == waited
    else:
        assert len(backoffs) == 2 and 3.75 <= backoffs[0] <= 5 and 6 <= backoffs[1] <= 8  # 5, then 10 capped at 8; jitter


def test_what_an_agent_will_read_from_the_prompt_cache_does_not_wait_for_room_in_the_input_limit() -> None:
    """Two agents, each with a prompt of ~8,000 tokens nearly all read from the cache, under an
    input limit of 10,000 a minute: the API counts ~50 a request, so their next requests go at
    once. Each agent's last reply told what its next request reads (``ratelimit_cache``); without
    that the second of them would wait for room for a whole prompt."""
    from tests.fake_ratelimited_api import prompt_tokens

    clock = Clock()
    with FakeRateLimitedAPI(input_tokens_per_minute=10_000, cache_reads=lambda body: prompt_tokens(body) - 50,
                            clock=clock) as api:
        model, admission, waits = paced(api, clock)
        seen: list[AdmitRequest] = []
        admit = admission.admit

        async def spying(identity, ticket):
            seen.append(ticket)
            return await admit(identity, ticket)

        admission.admit = spying  # type: ignore[method-assign]

        def ask(agent: str, turn: int) -> ModelRequest:
            text = f"turn {turn} " + "the same long prefix " * 1_600
            return ModelRequest(model=MODEL, messages=[{"role": "user", "content": text}], max_tokens=16,
                                agent_id=agent)

        async def run() -> None:
            for agent in ("a1", "a2"):  # the first requests: nothing known yet
                await model.create(ask(agent, 1))
            before, seen[:] = clock.now, []
            waits.clear()
            replies = await asyncio.gather(model.create(ask("a1", 2)), model.create(ask("a2", 2)))
            assert [r.content[0].text for r in replies] == ["ok", "ok"]
            assert clock.now == before and waits == []  # nobody waited

        asyncio.run(run())
    assert all(t.cache_read_tokens > 7_000 and t.input_tokens - t.cache_read_tokens < 200 for t in seen), seen
    assert api.count(429) == 0
