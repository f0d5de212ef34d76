"""Leases (covey.ratelimit.lease): when the scheduler lends a slice of its buckets, what a
holder may admit under it, how its replies and its end come back, and when it is called back."""

from __future__ import annotations

import asyncio

from covey.model.base import TokenUsage
from covey.ratelimit.lease import GRACE_S, LEASE_S, HeldLease, Lease, LeaseHolder, LeaseReport
from covey.ratelimit.ports import AdmitRequest, Admitted, Wait
from covey.ratelimit.scheduler import RateScheduler
from covey.ratelimit.signals import RateLimitSettings, identity_for

IDENTITY = identity_for("https://api.anthropic.com", "sk-test", "claude-sonnet-4-6")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def headers(limit: int, remaining: int) -> dict[str, str]:
    return {"anthropic-ratelimit-requests-limit": str(limit), "anthropic-ratelimit-requests-remaining": str(remaining)}


def scheduler(clock: Clock, rpm: int | None = None) -> RateScheduler:
    return RateScheduler(IDENTITY, RateLimitSettings(requests_per_minute=rpm) if rpm else None, clock=clock)


def request(request_id: str, input_tokens: int = 100, max_tokens: int = 10, session_id: str = "s1") -> AdmitRequest:
    return AdmitRequest(request_id, input_tokens=input_tokens, max_tokens=max_tokens, session_id=session_id)


def test_nothing_is_lent_before_the_first_reply_then_an_unlimited_lease_if_the_api_sends_no_limits() -> None:
    clock = Clock()
    sched = scheduler(clock)
    assert isinstance(sched.admit(request("r1")), Admitted)
    assert sched.lease() is None  # whether the API limits anything is not known yet
    sched.record_reply("r1", headers={}, usage=TokenUsage(input_tokens=100, output_tokens=5))
    lease = sched.lease()
    assert lease is not None and lease.allowance == {} and lease.until == clock.now + LEASE_S
    held = HeldLease(lease, clock.now)
    assert all(held.take(request(f"x{i}", 10**6, 10**5), None, clock.now) for i in range(50))  # nothing limits it


def test_a_lease_lends_a_tenth_of_each_bucket_only_while_far_from_the_limit() -> None:
    clock = Clock()
    sched = scheduler(clock, rpm=100)
    lease = sched.lease()  # a limit set by hand is known before any reply
    assert lease is not None and lease.allowance == {"requests": 10.0}
    assert sched.buckets["requests"].level == 90  # taken when lent
    for i in range(35):
        assert isinstance(sched.admit(request(f"r{i}")), Admitted)
    assert sched.lease() is None  # 55 left: lending 10 would leave under half


def test_nothing_is_lent_while_a_request_waits_or_a_429_pauses_the_identity() -> None:
    clock = Clock()
    sched = scheduler(clock, rpm=2)
    sched.admit(request("r1"))
    sched.admit(request("r2"))
    assert isinstance(sched.admit(request("r3")), Wait)
    assert sched.lease() is None
    paused = scheduler(clock, rpm=1000)
    paused.admit(request("p1"))
    paused.record_refusal("p1", 429, {"retry-after": "10"})
    assert paused.lease() is None
    clock.now += 11
    assert isinstance(paused.admit(request("p1")), Admitted) and paused.lease() is not None


def test_a_holder_admits_within_the_allowance_until_the_lease_runs_out() -> None:
    lease = Lease("l1", until=5.0, duration_s=2.0, allowance={"requests": 3.0, "input_tokens": 250.0},
                  cache_reads_count=False)
    held = HeldLease(lease, 1000.0)  # the holder's own clock counts the lease's 2 s
    assert held.take(request("a", input_tokens=100), None, 1000.0)
    assert not held.take(request("b", input_tokens=200), None, 1000.0)  # 300 input tokens > 250
    cached = AdmitRequest("c", input_tokens=200, max_tokens=10, cache_read_tokens=150)
    assert held.take(cached, None, 1000.0)  # cache reads do not count: 50 more
    assert held.used == {"requests": 2.0, "input_tokens": 150.0, "output_tokens": 20.0}
    assert not held.take(request("d", input_tokens=1), None, 1002.0)  # ran out


def test_replies_correct_the_estimates_and_teach_the_limits_the_end_gives_back_what_was_not_used() -> None:
    clock = Clock()
    sched = scheduler(clock)
    sched.admit(request("r0"))
    sched.record_reply("r0", headers=headers(100, 99), usage=None)
    lease = sched.lease()
    assert lease is not None and lease.allowance == {"requests": 10.0}
    held = HeldLease(lease, clock.now)
    assert held.take(request("a"), None, clock.now) and held.take(request("b"), None, clock.now)
    held.replied("a", headers(100, 97), TokenUsage(input_tokens=40, output_tokens=5))
    report = held.report(clock.now)
    assert sched.report(report) and report.end is False
    held.told(report, True)
    assert sched.buckets["requests"].level == 89  # 99 − 10 lent; the API's 97 is higher, so ours holds
    clock.now += LEASE_S
    final = held.report(clock.now)
    assert final.end and not sched.report(final)
    # 89, refilled for 2 s (92.3), and the 8 unused back: over the capacity, so full
    assert sched.buckets["requests"].level == 100.0
    assert len(sched.leases) == 0


def test_a_lease_is_called_back_when_a_request_queues_or_a_new_limit_is_learned() -> None:
    clock = Clock()
    sched = scheduler(clock, rpm=40)
    lease = sched.lease()
    assert lease is not None
    for i in range(36):  # 40 − 4 lent: 36; the next one waits
        sched.admit(request(f"r{i}"))
    assert isinstance(sched.admit(request("late")), Wait)
    held = HeldLease(lease, clock.now)
    assert held.take(request("a"), None, clock.now)
    report = held.report(clock.now)
    assert not sched.report(report)  # called back; 3 unused requests go back to the queue's bucket
    held.told(report, False)
    assert held.ended and not held.take(request("b"), None, clock.now)

    learning = scheduler(clock)
    learning.admit(request("q"))
    learning.record_reply("q", headers={}, usage=None)
    unlimited = learning.lease()
    assert unlimited is not None and unlimited.allowance == {}
    news = HeldLease(unlimited, clock.now)
    news.take(request("n"), None, clock.now)
    news.replied("n", headers(1000, 990), None)
    assert not learning.report(news.report(clock.now))  # a limit learned: the unlimited lease ends


def test_a_refused_request_ends_the_lease_and_is_not_counted() -> None:
    held = HeldLease(Lease("l1", 1002.0, 2.0, {"requests": 5.0}, False), 1000.0)
    held.take(request("a"), None, 1000.0)
    held.take(request("b"), None, 1000.0)
    assert held.refused("b") and held.ended
    assert held.used["requests"] == 1.0 and not held.take(request("c"), None, 1000.0)
    assert not held.refused("zzz")  # not sent under this lease


def test_a_refusal_of_a_request_the_scheduler_admitted_ends_the_holders_lease_at_once() -> None:
    clock = Clock()
    sched = scheduler(clock, rpm=600)

    async def tell(report: LeaseReport) -> bool:
        return sched.report(report)

    async def scenario() -> None:
        holder = LeaseHolder(clock=clock, flush_s=0.01)
        key = IDENTITY.key
        holder.wants(key)
        holder.asked(key, sched.lease(), tell)
        assert holder.admit_here(key, request("a"), None)
        # A 529 for a request admitted by the scheduler (not under the lease): nothing more is
        # admitted here, before the scheduler has heard of the refusal.
        assert not holder.refused(key, "sent-by-the-scheduler")
        assert not holder.admit_here(key, request("b"), None)
        assert holder.replied("a", {}, None)  # what was sent under it is still told
        await asyncio.sleep(0.05)
        assert key not in holder.current and len(sched.leases) == 0

    asyncio.run(scenario())


def test_the_runs_limits_set_by_hand_are_held_through_the_reports() -> None:
    clock = Clock()
    sched = scheduler(clock)
    sched.admit(request("r0"))
    sched.record_reply("r0", headers={}, usage=None)
    lease = sched.lease()
    assert lease is not None
    held = HeldLease(lease, clock.now)
    held.take(request("a", session_id="s9"), RateLimitSettings(requests_per_minute=7), clock.now)
    sched.report(held.report(clock.now))
    assert sched.hand.limits == {"requests": 7}


def test_a_lease_whose_holder_is_gone_is_dropped_without_giving_anything_back() -> None:
    clock = Clock()
    sched = scheduler(clock, rpm=600)
    assert sched.lease() is not None
    clock.now += LEASE_S + GRACE_S + 1
    assert sched.lease() is not None and len(sched.leases) == 1  # the first is dropped when the next is lent


def test_the_holder_admits_here_tells_replies_in_batches_and_ends_the_lease_when_it_runs_out() -> None:
    clock = Clock()
    sched = scheduler(clock, rpm=600)
    told: list[LeaseReport] = []

    async def tell(report: LeaseReport) -> bool:
        told.append(report)
        return sched.report(report)

    async def scenario() -> None:
        holder = LeaseHolder(clock=clock, flush_s=0.01)
        key = IDENTITY.key
        assert not holder.admit_here(key, request("a"), None)
        assert holder.wants(key) and not holder.wants(key)  # one ask at a time
        holder.asked(key, sched.lease(), tell)
        assert holder.admit_here(key, request("a"), None) and holder.admit_here(key, request("b"), None)
        assert holder.replied("a", {}, None) and not holder.replied("a", {}, None)
        assert holder.replied("b", {}, None)
        await asyncio.sleep(0.05)
        assert [len(report.replies) for report in told] == [2]  # both in one report
        clock.now += LEASE_S
        assert not holder.admit_here(key, request("c"), None)
        await asyncio.sleep(0.05)
        assert told[-1].end and key not in holder.current and len(sched.leases) == 0

    asyncio.run(scenario())
