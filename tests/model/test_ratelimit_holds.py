"""Limits set by hand are held by the runs that set them: they apply while the run sends and
lapse after ``HOLD_S`` without its requests, so a cloned project's ``rateLimits`` do not throttle
the user's later sessions on the shared scheduler. A fake clock; no Ray."""

from __future__ import annotations

from covey.model.base import TokenUsage
from covey.ratelimit.holds import HOLD_S
from covey.ratelimit.ports import AdmitRequest, Admitted, Wait
from covey.ratelimit.scheduler import RateScheduler
from covey.ratelimit.schedulers import RateSchedulers
from covey.ratelimit.signals import RateLimitSettings, identity_for
from tests.model.test_ratelimit import T0, Clock

IDENTITY = identity_for("https://gateway.example", "sk-test", "claude-sonnet-4-6")


def ask(sched: RateScheduler, request_id: str, session: str, settings: RateLimitSettings | None = None):
    sched.hold(session, settings)
    decision = sched.admit(AdmitRequest(request_id, 10, 10, session_id=session))
    if isinstance(decision, Admitted):
        sched.record_reply(request_id, usage=TokenUsage(input_tokens=10, output_tokens=10))
    return decision


def test_a_runs_limit_applies_while_it_sends_and_lapses_after_it_stops() -> None:
    clock = Clock()
    sched = RateSchedulers(clock=clock).of(IDENTITY)
    two_a_minute = RateLimitSettings(requests_per_minute=2)
    assert isinstance(ask(sched, "c1", "cloned", two_a_minute), Admitted)
    assert isinstance(ask(sched, "c2", "cloned", two_a_minute), Admitted)
    assert isinstance(ask(sched, "mine1", "mine"), Wait)  # held: the other session's request waits too
    clock.advance(HOLD_S + 1)  # the cloned project's run ended (it sends no more)
    for n in range(10):  # nothing set by hand, no headers: nothing holds the user's session back
        assert isinstance(ask(sched, f"mine{n + 2}", "mine"), Admitted)
    assert sched.hand.limits == {} and "requests" not in sched.buckets


def test_a_lapsed_ceiling_gives_the_bucket_back_its_learned_limit() -> None:
    clock = Clock()
    sched = RateSchedulers(clock=clock).of(IDENTITY)
    sched.hold("s1", RateLimitSettings(requests_per_minute=5))
    sched.admit(AdmitRequest("r1", 10, 10, session_id="s1"))
    sched.record_reply("r1", headers={"anthropic-ratelimit-requests-limit": "50"})
    assert sched.buckets["requests"].capacity == 5  # the hand's ceiling under the API's 50
    clock.advance(HOLD_S + 1)
    sched.hold("s2", None)
    assert sched.buckets["requests"].capacity == 50


def test_while_two_runs_hold_limits_the_lowest_applies_and_each_keeps_its_patience() -> None:
    clock = Clock()
    sched = RateSchedulers(clock=clock).of(IDENTITY)
    sched.hold("a", RateLimitSettings(requests_per_minute=100, patience_s=30))
    sched.hold("b", RateLimitSettings(requests_per_minute=3, input_tokens_per_minute=9_000))
    assert sched.hand.limits == {"requests": 3, "input_tokens": 9_000}
    assert (sched.hand.patience_s("a"), sched.hand.patience_s("b")) == (30, RateLimitSettings().patience_s)
    clock.advance(HOLD_S / 2)
    sched.hold("a", RateLimitSettings(requests_per_minute=100, patience_s=30))  # a renews; b is still in
    assert sched.hand.limits["requests"] == 3
    clock.advance(HOLD_S / 2 + 1)
    sched.hold("a", RateLimitSettings(requests_per_minute=100, patience_s=30))
    assert sched.hand.limits == {"requests": 100}  # b lapsed
    assert clock.now > T0


def test_limits_a_scheduler_was_made_with_never_lapse() -> None:
    clock = Clock()
    sched = RateScheduler(IDENTITY, RateLimitSettings(requests_per_minute=1), clock=clock)
    clock.advance(10 * HOLD_S)
    sched.hold("s", None)
    assert sched.hand.limits == {"requests": 1} and sched.buckets["requests"].capacity == 1
