"""The rate scheduler's core: buckets, the fair queue, waits and refusals, on a fake clock."""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

import pytest

from covey.errors import LimitExceeded
from covey.model.base import TokenUsage
from covey.ratelimit.acquire import acquire
from covey.ratelimit.ports import AdmitRequest, Admitted, RateLimitRefused, RateRefused, Wait
from covey.ratelimit.scheduler import RateScheduler
from covey.ratelimit.signals import RateLimitSettings, identity_for

T0 = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def scheduler(clock: Clock, model: str = "claude-sonnet-4-6", **limits: Any) -> RateScheduler:
    return RateScheduler(identity_for("https://api.anthropic.com", "sk-test", model), RateLimitSettings(**limits),
                         clock=clock)


def req(request_id: str, *, input_tokens: int = 100, max_tokens: int = 100, **fields: Any) -> AdmitRequest:
    return AdmitRequest(request_id, input_tokens, max_tokens, **fields)


def run_until_admitted(sched: RateScheduler, clock: Clock, requests: list[AdmitRequest],
                       step_s: float = 0.25, limit_s: float = 3600) -> list[tuple[str, float]]:
    """The requests arrive in the order given, then every waiting one asks again each step, the
    latest arrival first (so asking first wins nothing); returns (request id, send time) in send order."""
    sent: list[tuple[str, float]] = []
    pending = list(requests)
    first_pass = True
    while pending and clock.now - T0 < limit_s:
        for request in list(pending) if first_pass else list(reversed(pending)):
            decision = sched.admit(request)
            if isinstance(decision, Admitted):
                sent.append((request.request_id, clock.now))
                sched.record_reply(request.request_id, usage=TokenUsage(input_tokens=request.input_tokens,
                                                                        output_tokens=request.max_tokens))
                pending.remove(request)
            assert not isinstance(decision, RateRefused), decision
        first_pass = False
        clock.advance(step_s)
    assert not pending
    return sent


def test_unknown_limits_hold_nothing_back() -> None:
    clock = Clock()
    sched = scheduler(clock)
    assert all(isinstance(sched.admit(req(f"r{i}")), Admitted) for i in range(100))


def test_thirty_requests_at_sixty_rpm_never_exceed_the_bucket() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=6)  # a bucket of 6, one more each 10 s
    sent = run_until_admitted(sched, clock, [req(f"r{i}") for i in range(30)], step_s=1.0)
    times = [at for _, at in sent]
    # In any window of length w, at most capacity + w * rate requests go (a token bucket's bound).
    for i, start in enumerate(times):
        for end in times[i:]:
            in_window = sum(start <= t <= end for t in times)
            assert in_window <= 6 + (end - start) / 10 + 1e-9
    assert times[5] == T0 and times[6] > T0  # the first six at once, then paced
    assert times[-1] - T0 == pytest.approx(240, abs=0.5)  # 24 more at one per 10 s: not slower than the bucket

    clock2 = Clock()
    sent60 = run_until_admitted(scheduler(clock2, requests_per_minute=60), clock2, [req(f"r{i}") for i in range(30)])
    assert len({at for _, at in sent60}) == 1  # 30 against a bucket of 60: all at once


def test_waiters_are_served_in_arrival_order() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=1)
    order = [req(f"r{i}", session_id=f"s{i % 3}") for i in range(6)]
    sent = run_until_admitted(sched, clock, order)
    assert [rid for rid, _ in sent] == [f"r{i}" for i in range(6)]


def test_arrival_order_holds_even_when_later_requests_ask_first() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=1)
    assert isinstance(sched.admit(req("first")), Admitted)
    waits = [sched.admit(req(name)) for name in ("a", "b", "c")]
    assert [w.position for w in waits if isinstance(w, Wait)] == [0, 1, 2]
    clock.advance(60)
    assert isinstance(sched.admit(req("c")), Wait)  # c asks first, but a is ahead and gets the token
    assert isinstance(sched.admit(req("a")), Admitted)


def test_foreground_goes_before_background_of_its_session_only() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=1)
    assert isinstance(sched.admit(req("warm")), Admitted)
    queue = [req("bg1", session_id="A"), req("other", session_id="B"), req("bg2", session_id="A"),
             req("main", session_id="A", foreground=True)]
    for request in queue:
        assert isinstance(sched.admit(request), Wait)
    sent = run_until_admitted(sched, clock, queue)
    # A's foreground request takes A's earliest place; B's earlier request keeps its place.
    assert [rid for rid, _ in sent] == ["main", "other", "bg1", "bg2"]


def test_oversize_request_is_sent_alone_when_the_bucket_is_full_and_not_starved() -> None:
    clock = Clock()
    sched = scheduler(clock, input_tokens_per_minute=1000)
    assert isinstance(sched.admit(req("small0", input_tokens=400)), Admitted)
    big = req("big", input_tokens=5000)
    smalls = [req(f"small{i}", input_tokens=100) for i in range(1, 20)]
    decision = sched.admit(big)
    assert isinstance(decision, Wait) and decision.limit == "input_tokens"
    assert decision.until == pytest.approx(T0 + 400 / (1000 / 60))  # until the bucket is full again
    sent = run_until_admitted(sched, clock, [big, *smalls], step_s=0.5)
    assert sent[0][0] == "big"  # the small ones that arrived later never overtake it
    assert sent[0][1] == pytest.approx(T0 + 24)
    # It left a debt of 4,000 tokens: paid back by the refill before the next request goes.
    assert sent[1][1] - sent[0][1] >= (5000 - 1000 + 100) / (1000 / 60) - 0.5


def test_reply_headers_update_the_buckets() -> None:
    clock = Clock()
    sched = scheduler(clock)
    assert isinstance(sched.admit(req("r0")), Admitted)
    reset = "2027-01-15T08:00:30Z"
    sched.record_reply("r0", headers={
        "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": reset,
        "Anthropic-RateLimit-Input-Tokens-Limit": "30000", "anthropic-ratelimit-input-tokens-remaining": "29000",
        "anthropic-ratelimit-output-tokens-limit": "8000", "anthropic-ratelimit-output-tokens-remaining": "bogus"})
    assert sched.buckets["requests"].capacity == 50 and sched.buckets["requests"].level == 0
    assert sched.buckets["input_tokens"].capacity == 30000 and sched.buckets["input_tokens"].level == 29000
    assert sched.buckets["output_tokens"].level == 8000  # an unreadable value is ignored
    decision = sched.admit(req("r1"))
    assert isinstance(decision, Wait) and decision.limit == "requests"
    assert decision.until == pytest.approx(T0 + 60 / 50)
    # A limit set by hand is a ceiling under the API's own.
    capped = scheduler(clock, requests_per_minute=10)
    capped.record_reply("x", headers={"anthropic-ratelimit-requests-limit": "50",
                                      "anthropic-ratelimit-requests-remaining": "50"})
    assert capped.buckets["requests"].capacity == 10


def test_headers_never_raise_the_level_above_our_own_count() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=10)
    for i in range(8):
        assert isinstance(sched.admit(req(f"r{i}")), Admitted)
    sched.record_reply("r0", headers={"anthropic-ratelimit-requests-limit": "10",
                                      "anthropic-ratelimit-requests-remaining": "9"})
    assert sched.buckets["requests"].level == pytest.approx(2)


def test_a_429_retry_after_pauses_everybody_and_keeps_the_place() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=2)
    assert isinstance(sched.admit(req("a", session_id="s1")), Admitted)
    sched.record_refusal("a", 429, {"retry-after": "20"})
    for request in (req("a", session_id="s1"), req("b", session_id="s2")):
        decision = sched.admit(request)
        assert isinstance(decision, Wait)
        assert decision.cause == "rate_limit_error" and decision.until == pytest.approx(T0 + 20)
    third = sched.admit(req("c", session_id="s3"))  # after the pause, a and b take both tokens
    assert isinstance(third, Wait) and third.limit == "requests" and third.until == pytest.approx(T0 + 50)
    clock.advance(19.9)
    assert isinstance(sched.admit(req("c", session_id="s3")), Wait)
    clock.advance(0.1)
    # Two tokens: the refused request kept its place ahead of b and c, so a and b go, c waits.
    assert isinstance(sched.admit(req("c", session_id="s3")), Wait)
    assert isinstance(sched.admit(req("b", session_id="s2")), Admitted)
    assert isinstance(sched.admit(req("a", session_id="s1")), Admitted)


def test_a_refused_request_is_refunded_and_a_529_pauses_too() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=2)
    assert isinstance(sched.admit(req("a")), Admitted)
    assert sched.buckets["requests"].level == 1
    sched.record_refusal("a", 529, {"retry-after-ms": "1500"})
    assert sched.buckets["requests"].level == 2
    decision = sched.admit(req("a"))
    assert isinstance(decision, Wait) and decision.cause == "overloaded_error" and decision.limit is None
    assert decision.until == pytest.approx(T0 + 1.5)


def test_a_429_without_retry_after_waits_for_the_exhausted_bucket() -> None:
    clock = Clock()
    sched = scheduler(clock)
    assert isinstance(sched.admit(req("a")), Admitted)
    clock.advance(0.5)
    headers = {"anthropic-ratelimit-input-tokens-limit": "1000", "anthropic-ratelimit-input-tokens-remaining": "0",
               "anthropic-ratelimit-input-tokens-reset": "2027-01-15T08:00:30Z"}  # T0 + 30 s
    sched.record_refusal("a", 429, headers)
    decision = sched.admit(req("a"))
    assert isinstance(decision, Wait) and decision.limit == "input_tokens" and decision.cause == "rate_limit_error"
    assert decision.until == pytest.approx(T0 + 30)


def test_patience_exhausted_gives_the_typed_refusal_naming_the_limit() -> None:
    clock = Clock()
    sched = scheduler(clock, output_tokens_per_minute=8000, patience_s=60)
    for i in range(4):
        assert isinstance(sched.admit(req(f"r{i}", max_tokens=2000)), Admitted)
    ok = sched.admit(req("soon", max_tokens=4000))
    assert isinstance(ok, Wait) and ok.limit == "output_tokens"
    decision = sched.admit(req("late", max_tokens=8000))  # needs the full bucket after "soon": > 60 s
    assert isinstance(decision, RateRefused)
    assert decision.limit == "output_tokens" and decision.limit_value == 8000 and decision.consumed == 8000
    error = decision.error(clock.now)
    assert isinstance(error, LimitExceeded) and isinstance(error, RateLimitRefused)
    assert "output tokens per minute" in str(error) and "8,000 consumed" in str(error)
    assert "the window resets at 2027-01-15T08:01:00Z (in 60 s)" in str(error)
    assert error.rate_limit == "output_tokens" and error.resets_at == pytest.approx(T0 + 60)
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == str(error) and again.rate_limit == "output_tokens"
    assert sched.snapshot().queued == 1  # the refused request left the queue; "soon" still waits


def test_patience_runs_out_while_waiting() -> None:
    clock = Clock()
    sched = scheduler(clock, patience_s=30)
    assert isinstance(sched.admit(req("a")), Admitted)
    sched.record_refusal("a", 429, {"retry-after": "20"})
    assert isinstance(sched.admit(req("a")), Wait)  # 20 s: within its patience
    clock.advance(20)
    assert isinstance(sched.admit(req("a")), Admitted)
    sched.record_refusal("a", 429, {"retry-after": "20"})
    decision = sched.admit(req("a"))  # 40 s since it first asked: past its 30 s
    assert isinstance(decision, RateRefused) and decision.cause == "rate_limit_error" and decision.limit is None
    assert decision.waited_s == pytest.approx(20) and decision.would_wait_s == pytest.approx(20)
    assert "(429)" in str(decision.error(clock.now))


def test_cache_reads_are_not_counted_on_current_models_but_are_on_claude_3() -> None:
    clock = Clock()
    sched = scheduler(clock, input_tokens_per_minute=10_000)
    assert not sched.cache_reads_count
    assert isinstance(sched.admit(req("a", input_tokens=9_000, cache_read_tokens=8_500)), Admitted)
    assert sched.buckets["input_tokens"].level == pytest.approx(9_500)
    sched.record_reply("a", usage=TokenUsage(input_tokens=300, cache_creation_input_tokens=100,
                                             cache_read_input_tokens=8_600, output_tokens=10))
    assert sched.buckets["input_tokens"].level == pytest.approx(9_600)  # 400 counted, the reads not

    old = scheduler(Clock(), model="claude-3-5-haiku-20241022", input_tokens_per_minute=10_000)
    assert old.cache_reads_count
    assert isinstance(old.admit(req("a", input_tokens=9_000, cache_read_tokens=8_500)), Admitted)
    assert old.buckets["input_tokens"].level == pytest.approx(1_000)


def test_usage_corrects_the_estimates() -> None:
    clock = Clock()
    sched = scheduler(clock, input_tokens_per_minute=10_000, output_tokens_per_minute=10_000)
    assert isinstance(sched.admit(req("a", input_tokens=1_000, max_tokens=4_000)), Admitted)
    assert sched.buckets["output_tokens"].level == 6_000  # max_tokens counted until the reply
    sched.record_reply("a", usage=TokenUsage(input_tokens=1_500, output_tokens=250))
    assert sched.buckets["output_tokens"].level == 9_750
    assert sched.buckets["input_tokens"].level == 8_500  # the estimate was low: the rest is taken


def test_cancel_frees_the_place() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=1)
    assert isinstance(sched.admit(req("a")), Admitted)
    assert isinstance(sched.admit(req("b")), Wait)
    later = sched.admit(req("c"))
    assert isinstance(later, Wait) and later.position == 1
    sched.cancel("b")
    sooner = sched.admit(req("c"))
    assert isinstance(sooner, Wait) and sooner.position == 0 and sooner.until < later.until


def test_a_wait_is_new_once_per_limit() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=1)
    sched.admit(req("a"))
    first, second = sched.admit(req("b")), sched.admit(req("b"))
    assert isinstance(first, Wait) and first.new and isinstance(second, Wait) and not second.new


def test_snapshot_shows_the_queue_buckets_and_waiters() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=2)
    for name in ("a", "b"):
        sched.admit(req(name, session_id="s", agent_id=f"agent-{name}"))
    sched.admit(req("c", session_id="s", agent_id="agent-c", foreground=True))
    clock.advance(12)
    snap = sched.snapshot()
    assert snap.queued == 1 and snap.in_flight == 2
    assert snap.buckets["requests"]["limit"] == 2 and snap.buckets["requests"]["remaining"] == pytest.approx(0.4)
    assert snap.next_reset == pytest.approx(T0 + 60)
    assert snap.identity.startswith("https://api.anthropic.com|") and "sk-test" not in snap.identity
    [waiter] = snap.waiting
    assert (waiter.agent_id, waiter.foreground, waiter.limit) == ("agent-c", True, "requests")
    assert waiter.waited_s == pytest.approx(12)


def test_acquire_sleeps_until_its_turn_and_reports_each_wait_once() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=2)
    seen: list[Wait | RateRefused] = []

    async def sleep(seconds: float) -> None:
        clock.advance(seconds)

    async def main() -> list[Admitted]:
        return [await acquire(sched, req(f"r{i}"), sleep=sleep, on_wait=seen.append) for i in range(4)]

    admitted = asyncio.run(main())
    assert [a.waited_s for a in admitted] == pytest.approx([0, 0, 30, 30])
    assert len(seen) == 2 and all(isinstance(w, Wait) and w.limit == "requests" for w in seen)


def test_acquire_raises_the_refusal() -> None:
    clock = Clock()
    sched = scheduler(clock, requests_per_minute=1, patience_s=10)
    sched.admit(req("a"))
    seen: list[Wait | RateRefused] = []

    async def sleep(seconds: float) -> None:
        clock.advance(seconds)

    with pytest.raises(RateLimitRefused, match="requests per minute"):
        asyncio.run(acquire(sched, req("b"), sleep=sleep, on_wait=seen.append))
    assert isinstance(seen[-1], RateRefused)
