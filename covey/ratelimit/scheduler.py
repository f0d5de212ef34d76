"""One request scheduler per API identity: model requests wait in one fair queue for the API's limits.

A plain core (no Ray, no I/O, an injected clock). ``admit`` answers at once: ``Admitted`` (send
now), ``Wait`` (ask again at ``until``) or ``RateRefused`` (the wait would outlast the request's
patience). Rules (docs/rate-limits.md): three token buckets (requests, input and output tokens
per minute), from limits set by hand (``covey/ratelimit/holds.py``) and every reply's headers, a limit
nobody told us about holding nothing back; a request takes 1 request, its input estimate (cache
reads left out where the API does) and its ``max_tokens``, corrected by the reply's usage;
strict arrival order, except that a foreground request takes its session's earliest waiting
background place; the head holds the rest back, so a request larger than a bucket is sent alone
once it is full, never starved; a 429/529 pauses the identity for its ``retry-after``, the
refused request keeping its place. While nobody waits, slices of the buckets are lent to the
gateways (``covey/ratelimit/lease.py``).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, replace
from typing import Callable, Mapping

from covey.model.base import TokenUsage
from covey.ratelimit.bucket import TokenBucket
from covey.ratelimit.holds import HandLimits
from covey.ratelimit.lease import Lease, LeaseBook, LeaseReport, Needs
from covey.ratelimit.signals import (LIMIT_NAMES, Identity, LimitName, RateLimitSettings, counts_cache_reads,
                                           parse_rate_headers, retry_after_s)
from covey.ratelimit.ports import (AdmitRequest, Admitted, RateDecision, RateRefused, WaitCause, RateSnapshot, Wait,
                                         WaitingEntry)

DEFAULT_RETRY_S = 5.0
"""How long a 429/529 without ``retry-after`` (or a reset header) pauses the identity."""


@dataclass
class _Entry:
    request: AdmitRequest
    seq: int
    arrived_at: float
    input_counted: float
    reported: tuple[WaitCause, LimitName | None] | None = None
    limit: LimitName | None = None

    def needs(self) -> dict[LimitName, float]:
        return {"requests": 1.0, "input_tokens": self.input_counted, "output_tokens": float(self.request.max_tokens)}


@dataclass(frozen=True)
class _Plan:
    send_at: float
    limit: LimitName | None
    cause: WaitCause
    position: int


class RateScheduler:
    def __init__(self, identity: Identity, settings: RateLimitSettings | None = None, *,
                 clock: Callable[[], float] = time.time, cache_reads_count: bool | None = None) -> None:
        self.identity = identity
        self.hand = HandLimits(settings)
        """Limits set by hand: ``settings`` for good, and each run's while it sends (``hold``)."""
        self.now = clock
        self.cache_reads_count = counts_cache_reads(identity.model_class) if cache_reads_count is None else cache_reads_count
        """Whether cache reads count toward the input limit (only the Claude 3 models)."""
        now = clock()
        self.buckets: dict[LimitName, TokenBucket] = {
            name: TokenBucket.full(limit, now) for name, limit in self.hand.limits.items()}
        self._queue: list[_Entry] = []
        self._granted: dict[str, Admitted] = {}
        self._in_flight: dict[str, _Entry] = {}
        self._paused_until = 0.0
        self._pause: tuple[WaitCause, LimitName | None] = ("queue", None)
        self._seq = itertools.count()
        self._version = 0
        """Bumped by every change, so a plan is only recomputed when something changed or is due."""
        self._plans: tuple[int, float, dict[str, _Plan]] = (-1, 0.0, {})
        self.leases = LeaseBook()
        self._heard = False  # a reply came: whether the API sends limits is known (nothing is lent before)

    # --- admission ----------------------------------------------------------------------

    def admit(self, request: AdmitRequest) -> RateDecision:
        """Send now, wait, or give up; ask again (same ``request_id``) after a ``Wait``."""
        now = self.now()
        if (granted := self._granted.pop(request.request_id, None)) is not None:
            return granted
        entry = self._queued(request.request_id) or self._enqueue(request, now)
        plans = self._pump(now)
        if (granted := self._granted.pop(request.request_id, None)) is not None:
            return granted
        plan = plans[request.request_id]
        patience = self.hand.patience_s(request.session_id) if request.patience_s is None else request.patience_s
        if plan.send_at - entry.arrived_at > patience:
            self._queue.remove(entry)
            self._version += 1
            return self._refusal(entry, plan, patience, now)
        new = entry.reported != (plan.cause, plan.limit)
        entry.reported = (plan.cause, plan.limit)
        return Wait(request.request_id, plan.send_at, plan.limit, plan.cause, plan.position, now - entry.arrived_at,
                    *self._bucket_facts(plan.limit, now), new=new, session_id=request.session_id,
                    agent_id=request.agent_id)

    def cancel(self, request_id: str) -> None:
        """Forget a request whose caller gave up (a queued one frees its place; a sent one is
        not refunded: the API counted it)."""
        self._queue = [entry for entry in self._queue if entry.request.request_id != request_id]
        self._granted.pop(request_id, None)
        self._in_flight.pop(request_id, None)
        self._version += 1

    def _enqueue(self, request: AdmitRequest, now: float) -> _Entry:
        cached = 0 if self.cache_reads_count else request.cache_read_tokens
        entry = _Entry(request, next(self._seq), now, float(max(request.input_tokens - cached, 0)))
        if request.foreground:
            self._take_first_place(entry)
        self._queue.append(entry)
        self._version += 1
        return entry

    def _take_first_place(self, entry: _Entry) -> None:
        """A foreground request takes its session's earliest place held by background work; each
        of those moves one place of the session's down. Places (not whole positions) move, so
        other sessions' requests keep theirs."""
        behind = sorted((e for e in self._queue if e.request.session_id == entry.request.session_id
                         and not e.request.foreground), key=lambda e: e.seq)
        places = [e.seq for e in behind] + [entry.seq]
        for moved, place in zip([entry, *behind], places):
            moved.seq = place

    def _queued(self, request_id: str) -> _Entry | None:
        return next((entry for entry in self._queue if entry.request.request_id == request_id), None)

    def _ordered(self) -> list[_Entry]:
        return sorted(self._queue, key=lambda entry: entry.seq)

    def _pump(self, now: float) -> dict[str, _Plan]:
        """Send every head of the queue that may go now; plan when the others will."""
        version, due, plans = self._plans
        if version == self._version and now < due:
            return plans
        while self._queue:
            head = self._ordered()[0]
            if self._ready_at(head, self.buckets, now, ("queue", None)).send_at > now:
                break
            self._send(head, now)
        simulated = {name: replace(bucket) for name, bucket in self.buckets.items()}
        plans, after = {}, _Plan(now, None, "queue", 0)
        for position, entry in enumerate(self._ordered()):
            after = self._ready_at(entry, simulated, after.send_at, (after.cause, after.limit), position)
            for name, amount in entry.needs().items():
                if name in simulated:
                    simulated[name].take(amount, after.send_at)
            entry.limit = after.limit
            plans[entry.request.request_id] = after
        first = min((plan.send_at for plan in plans.values()), default=float("inf"))
        self._plans = (self._version, first, plans)
        return plans

    def _ready_at(self, entry: _Entry, buckets: Mapping[LimitName, TokenBucket], earliest: float,
                  behind: tuple[WaitCause, LimitName | None], position: int = 0) -> _Plan:
        """When ``entry`` may go, no earlier than ``earliest`` (the request ahead of it), and what holds it."""
        send_at, (cause, limit) = earliest, behind
        if self._paused_until > send_at:
            send_at, (cause, limit) = self._paused_until, self._pause
        for name, amount in entry.needs().items():
            if name in buckets and (wait := buckets[name].seconds_until(amount, send_at)) > 0:
                send_at, cause, limit = send_at + wait, "queue", name
        return _Plan(send_at, limit, cause, position)

    def _send(self, entry: _Entry, now: float) -> None:
        self._queue.remove(entry)
        for name, amount in entry.needs().items():
            if name in self.buckets:
                self.buckets[name].take(amount, now)
        self._in_flight[entry.request.request_id] = entry
        self._granted[entry.request.request_id] = Admitted(entry.request.request_id, now - entry.arrived_at)
        self._version += 1

    def _refusal(self, entry: _Entry, plan: _Plan, patience: float, now: float) -> RateRefused:
        request = entry.request
        return RateRefused(request.request_id, plan.limit, plan.cause, now - entry.arrived_at, plan.send_at - now, patience,
                       *self._bucket_facts(plan.limit, now), session_id=request.session_id, agent_id=request.agent_id)

    def _bucket_facts(self, limit: LimitName | None, now: float) -> tuple[float | None, float | None, float | None]:
        """(consumed, limit, resets at) of the limit that holds a request back."""
        bucket = self.buckets.get(limit) if limit else None
        if bucket is None:
            return None, None, self._paused_until if self._paused_until > now else None
        return bucket.consumed(now), bucket.capacity, bucket.resets_at(now)

    # --- what the API said -----------------------------------------------------------------

    def record_reply(self, request_id: str, *, headers: Mapping[str, str] | None = None,
                     usage: TokenUsage | None = None) -> None:
        """A reply arrived: correct the estimates by its usage, then learn from its headers."""
        now = self.now()
        entry = self._in_flight.pop(request_id, None)
        if entry is not None:
            self._correct(entry.needs(), usage, now)
        self._observe(headers or {}, now)

    def _correct(self, needs: Needs, usage: TokenUsage | None, now: float) -> None:
        """Give back (or take) what a request's estimate missed, by its reply's usage."""
        if usage is not None:
            counted = usage.input_tokens + usage.cache_creation_input_tokens
            counted += usage.cache_read_input_tokens if self.cache_reads_count else 0
            self._adjust("input_tokens", needs["input_tokens"] - counted, now)
            self._adjust("output_tokens", needs["output_tokens"] - usage.output_tokens, now)

    # --- leases (covey.ratelimit.lease) -------------------------------------------------

    def lease(self) -> Lease | None:
        """Lend a slice of the buckets, if nobody waits and the identity is far from its limits."""
        now = self.now()
        if self._queue or self._paused_until > now or not (self._heard or self.buckets):
            return None
        lease = self.leases.grant(self.buckets, now, self.cache_reads_count)
        self._version += lease is not None
        return lease

    def report(self, report: LeaseReport) -> bool:
        """A holder's news (``LeaseReport``); whether its lease still holds (else it is ended here)."""
        now = self.now()
        for session_id, settings in report.holds.items():
            self.hold(session_id, settings)
        for reply in report.replies:
            self._correct(reply.needs, reply.usage, now)
            self._observe(reply.headers, now)
        if not report.end and not self._queue and self._paused_until <= now \
                and self.leases.keeps(report.lease_id, self.buckets, now):
            return True
        self.leases.end(report.lease_id, report.used, self.buckets, now)
        self._version += 1
        return False

    def record_refusal(self, request_id: str, status: int, headers: Mapping[str, str] | None = None) -> None:
        """The API answered 429 (``rate_limit_error``) or 529 (``overloaded_error``): pause the whole
        identity for its ``retry-after``; the request goes back to its place in the queue."""
        now, headers = self.now(), headers or {}
        entry = self._in_flight.pop(request_id, None)
        if entry is not None:
            for name, amount in entry.needs().items():  # the API did not count a refused request
                self._adjust(name, amount, now)
            entry.reported = None
            self._queue.append(entry)
        signals = parse_rate_headers(headers)
        self._observe(headers, now)
        exhausted = next((name for name, signal in signals.items() if signal.remaining == 0), None)
        wait = retry_after_s(headers, now)
        if wait is None:
            reset = signals[exhausted].reset_at if exhausted else None
            wait = reset - now if reset is not None and reset > now else DEFAULT_RETRY_S
        self._version += 1
        if now + wait > self._paused_until:
            self._paused_until = now + wait
            self._pause = ("rate_limit_error" if status == 429 else "overloaded_error", exhausted)

    def hold(self, session_id: str, settings: RateLimitSettings | None) -> None:
        """A request of ``session_id`` comes with its run's limits set by hand (``HandLimits``)."""
        now = self.now()
        if not self.hand.hold(session_id, settings, now):
            return
        self._version += 1
        for name in LIMIT_NAMES:
            ceiling = self.hand.limits.get(name)
            if (bucket := self.buckets.get(name)) is None:
                if ceiling:
                    self.buckets[name] = TokenBucket.full(ceiling, now)
            elif not bucket.cap(ceiling, now):
                del self.buckets[name]

    def _adjust(self, name: LimitName, amount: float, now: float) -> None:
        self._version += 1
        if name in self.buckets:
            self.buckets[name].adjust(amount, now)

    def _observe(self, headers: Mapping[str, str], now: float) -> None:
        self._version += 1
        self._heard = True
        for name, signal in parse_rate_headers(headers).items():
            ceiling = self.hand.limits.get(name)
            if name in self.buckets:
                self.buckets[name].observe(signal, ceiling, now)
            elif signal.limit:
                capacity = float(min(signal.limit, ceiling) if ceiling else signal.limit)
                self.buckets[name] = TokenBucket(capacity, capacity, now)
                self.buckets[name].observe(signal, ceiling, now)

    def snapshot(self) -> RateSnapshot:
        """The state now (requests that are due are admitted first, as ``admit`` would)."""
        now = self.now()
        self._pump(now)
        resets = [bucket.resets_at(now) for bucket in self.buckets.values() if bucket.level_at(now) < bucket.capacity]
        waiting = [WaitingEntry(e.request.request_id, e.request.session_id, e.request.agent_id, e.request.foreground,
                                now - e.arrived_at, e.limit) for e in self._ordered()]
        return RateSnapshot(self.identity.key, len(self._queue), len(self._in_flight),
                            {name: bucket.view(now) for name, bucket in self.buckets.items()},
                            self._paused_until if self._paused_until > now else None,
                            min(resets) if resets else None, waiting, len(self.leases))
