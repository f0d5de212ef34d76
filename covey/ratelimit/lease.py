"""Leases: while an identity is far from its limits, the shared scheduler lends a node's gateway
a slice of its buckets, and the gateway admits requests from it where it sends them, with no
round trip to the scheduler (docs/rate-limits.md, "Leases").

Plain values and rules, no Ray, no I/O. The scheduler's side is ``LeaseBook`` (used by
``RateScheduler.lease`` and ``RateScheduler.report``); the holder's side is ``HeldLease``.

- A lease is lent only while nobody waits, no 429/529 pause holds, and every known bucket keeps
  at least ``GRANT_ABOVE`` of its capacity after lending ``SHARE`` of it; it lasts ``LEASE_S``.
  A limit nothing is known of (no header, no limit set by hand) is not limited by the lease
  either, as it is not by the scheduler; before the first reply nothing is lent at all (the
  scheduler does not yet know whether the API sends limits).
- What a lease lends is taken from the buckets when it is lent; what it did not use is given
  back when it ends. The holder tells the scheduler, every ``FLUSH_S`` at most, what it used
  and how its replies went (the usage corrects the estimates, the headers teach the limits, as
  for any request); the answer says whether the lease still holds: it is called back as soon as
  a request waits, a 429/529 pauses the identity, a bucket falls under ``KEEP_ABOVE`` or a new
  limit is learned.
- A holder that is gone never ends its lease: the scheduler drops it ``GRACE_S`` after it ran
  out, without giving anything back (the buckets refill within the minute).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Mapping

from covey.model.base import TokenUsage
from covey.ratelimit.bucket import TokenBucket
from covey.ratelimit.ports import AdmitRequest
from covey.ratelimit.signals import LimitName, RateLimitSettings

LEASE_S = 2.0
SHARE = 0.1
GRANT_ABOVE = 0.5
KEEP_ABOVE = 0.25
FLUSH_S = 0.05
GRACE_S = 10.0

Needs = dict[LimitName, float]


@dataclass(frozen=True)
class Lease:
    lease_id: str
    until: float
    """The scheduler's clock; its holder counts ``duration_s`` on its own (another node's clock)."""
    duration_s: float
    allowance: Needs
    """What the holder may admit, per limit; a limit not named here is not limited by the lease."""
    cache_reads_count: bool
    """Whether cache reads count toward the input limit (the scheduler's rule, for ``needs_of``)."""


@dataclass(frozen=True)
class LeasedReply:
    """How a request admitted under a lease went: what it took, and what the API said."""

    needs: Needs
    headers: dict[str, str]
    usage: TokenUsage | None


@dataclass(frozen=True)
class LeaseReport:
    """What a holder tells the scheduler: all it has taken under the lease so far, the replies
    not told yet, the runs' limits set by hand it sent for (held as their requests would be)."""

    lease_id: str
    used: Needs
    replies: list[LeasedReply] = field(default_factory=list)
    holds: dict[str, RateLimitSettings | None] = field(default_factory=dict)
    end: bool = False


def needs_of(request: AdmitRequest, cache_reads_count: bool) -> Needs:
    """What ``request`` takes from each bucket, as the API counts it."""
    cached = 0 if cache_reads_count else request.cache_read_tokens
    return {"requests": 1.0, "input_tokens": float(max(request.input_tokens - cached, 0)),
            "output_tokens": float(request.max_tokens)}


class LeaseBook:
    """The scheduler's leases out: what each lent, until when."""

    def __init__(self) -> None:
        self._lent: dict[str, tuple[Needs, float]] = {}

    def __len__(self) -> int:
        return len(self._lent)

    def grant(self, buckets: Mapping[LimitName, TokenBucket], now: float, cache_reads_count: bool) -> Lease | None:
        """A lease of ``SHARE`` of every bucket, if each keeps ``GRANT_ABOVE`` of its capacity."""
        self._drop_abandoned(now)
        allowance = {name: bucket.capacity * SHARE for name, bucket in buckets.items()}
        if any(bucket.level_at(now) - allowance[name] < bucket.capacity * GRANT_ABOVE
               for name, bucket in buckets.items()):
            return None
        for name, amount in allowance.items():
            buckets[name].take(amount, now)
        lease = Lease(f"lease_{uuid.uuid4().hex[:16]}", now + LEASE_S, LEASE_S, allowance, cache_reads_count)
        self._lent[lease.lease_id] = (allowance, lease.until)
        return lease

    def keeps(self, lease_id: str, buckets: Mapping[LimitName, TokenBucket], now: float) -> bool:
        """Whether the lease still holds (the scheduler checks its queue and pause itself)."""
        lent = self._lent.get(lease_id)
        if lent is None or now >= lent[1] or set(buckets) != set(lent[0]):
            return False
        return all(bucket.level_at(now) >= bucket.capacity * KEEP_ABOVE for bucket in buckets.values())

    def end(self, lease_id: str, used: Needs, buckets: Mapping[LimitName, TokenBucket], now: float) -> None:
        """The lease is over: what it lent and nobody used goes back to the buckets."""
        allowance, _ = self._lent.pop(lease_id, ({}, 0.0))
        for name, amount in allowance.items():
            if name in buckets:
                buckets[name].adjust(max(amount - used.get(name, 0.0), 0.0), now)

    def _drop_abandoned(self, now: float) -> None:
        for lease_id in [key for key, (_, until) in self._lent.items() if now > until + GRACE_S]:
            del self._lent[lease_id]


class HeldLease:
    """A gateway's lease of one identity: what it admitted under it, the replies not told yet."""

    def __init__(self, lease: Lease, now: float) -> None:
        self.lease = lease
        self.until = now + lease.duration_s
        self.used: Needs = {"requests": 0.0, "input_tokens": 0.0, "output_tokens": 0.0}
        self.admitted: dict[str, Needs] = {}
        """Requests sent under the lease whose reply has not come."""
        self.replies: list[LeasedReply] = []
        self.holds: dict[str, RateLimitSettings | None] = {}
        self.ended = False
        """Nothing more is admitted under it."""
        self.closed = False
        """Its end is told (or the scheduler ended it): only replies still to come are told."""

    def take(self, request: AdmitRequest, settings: RateLimitSettings | None, now: float) -> bool:
        """Admit ``request`` under the lease, if it holds and has room for it."""
        if self.ended or now >= self.until:
            return False
        needs = needs_of(request, self.lease.cache_reads_count)
        allowance = self.lease.allowance
        if any(name in allowance and self.used[name] + amount > allowance[name] for name, amount in needs.items()):
            return False
        for name, amount in needs.items():
            self.used[name] += amount
        self.admitted[request.request_id] = needs
        self.holds[request.session_id] = settings
        return True

    def replied(self, request_id: str, headers: Mapping[str, str], usage: TokenUsage | None) -> bool:
        """Keep a reply to tell; False if the request was not admitted here."""
        needs = self.admitted.pop(request_id, None)
        if needs is None:
            return False
        self.replies.append(LeasedReply(needs, dict(headers), usage))
        return True

    def refused(self, request_id: str) -> bool:
        """The API refused the request (429/529): it did not count it, and the lease is over (the
        request waits in the scheduler's queue now). False if it was not admitted here."""
        needs = self.admitted.pop(request_id, None)
        if needs is None:
            return False
        for name, amount in needs.items():
            self.used[name] -= amount
        self.ended = True
        return True

    def forget(self, request_id: str) -> bool:
        """The request was given up after it was sent: no reply will come (the API counted it)."""
        return self.admitted.pop(request_id, None) is not None

    def due(self, now: float) -> bool:
        """Whether there is something to tell: replies, or an end not told yet."""
        return bool(self.replies) or (not self.closed and (self.ended or now >= self.until))

    def finished(self) -> bool:
        """Its end told and no reply still to come: nothing more to do for this lease."""
        return self.closed and not self.admitted and not self.replies

    def report(self, now: float) -> LeaseReport:
        """What to tell now (the replies and holds are handed over)."""
        replies, self.replies = self.replies, []
        holds, self.holds = self.holds, {}
        self.ended = self.ended or now >= self.until
        return LeaseReport(self.lease.lease_id, dict(self.used), replies, holds, self.ended and not self.closed)

    def told(self, report: LeaseReport, keeps: bool) -> None:
        """The scheduler heard ``report``; ``keeps``: the lease still holds."""
        if report.end or not keeps:
            self.ended = self.closed = True


class LeaseHolder:
    """A process's leases (the node's gateway's), one per identity, each told to its scheduler
    by a task of its own while it lasts and while replies of requests sent under it come."""

    def __init__(self, *, clock: Callable[[], float] = time.time, flush_s: float = FLUSH_S) -> None:
        self.clock, self.flush_s = clock, flush_s
        self.current: dict[str, HeldLease] = {}
        self._by_request: dict[str, HeldLease] = {}
        self._asking: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def admit_here(self, key: str, request: AdmitRequest, settings: RateLimitSettings | None) -> bool:
        """Admit ``request`` under identity ``key``'s lease, if one holds with room for it."""
        held = self.current.get(key)
        if held is None or not held.take(request, settings, self.clock()):
            return False
        self._by_request[request.request_id] = held
        return True

    def wants(self, key: str) -> bool:
        """Whether to ask for a lease with this request (none held, none being asked for)."""
        held = self.current.get(key)
        if key in self._asking or (held is not None and not held.ended and self.clock() < held.until):
            return False
        self._asking.add(key)
        return True

    def asked(self, key: str, lease: Lease | None, tell: Callable[[LeaseReport], Awaitable[bool]]) -> None:
        """The answer to ``wants``: a new lease (the one it replaces ends), or none."""
        self._asking.discard(key)
        if lease is None:
            return
        if (old := self.current.get(key)) is not None:
            old.ended = True
        held = self.current[key] = HeldLease(lease, self.clock())
        task = asyncio.get_running_loop().create_task(self._tell(key, held, tell))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def replied(self, request_id: str, headers: Mapping[str, str], usage: TokenUsage | None) -> bool:
        held = self._by_request.pop(request_id, None)
        return held is not None and held.replied(request_id, headers, usage)

    def refused(self, key: str, request_id: str) -> bool:
        """The API refused a request of identity ``key`` (429/529): the identity's lease ends now,
        whoever admitted the request (the scheduler pauses the identity when it hears of it; until
        then nothing more goes out here). True if the request was sent under a lease."""
        held = self._by_request.pop(request_id, None)
        if (current := self.current.get(key)) is not None:
            current.ended = True
        return held is not None and held.refused(request_id)

    def forget(self, request_id: str) -> bool:
        held = self._by_request.pop(request_id, None)
        return held is not None and held.forget(request_id)

    async def _tell(self, key: str, held: HeldLease, tell: Callable[[LeaseReport], Awaitable[bool]]) -> None:
        while not held.finished():
            await asyncio.sleep(self.flush_s)
            if not held.due(self.clock()):
                continue
            report = held.report(self.clock())
            try:
                keeps = await tell(report)
            except Exception:  # the scheduler is gone (its successor lends anew); so is this lease
                keeps = False
            held.told(report, keeps)
            if held.ended and self.current.get(key) is held:
                del self.current[key]
