"""One token bucket, as the Messages API keeps them: ``capacity`` per minute, refilled continuously.

The level may go below zero: a request larger than the whole bucket is sent alone once the
bucket is full (it would never fit otherwise), and the debt it leaves is paid back by the refill
before anything else is sent. Times are the scheduler's clock (epoch seconds).
"""

from __future__ import annotations

from dataclasses import dataclass

from covey.ratelimit.signals import BucketSignal


@dataclass
class TokenBucket:
    capacity: float
    level: float
    updated_at: float
    reset_at: float | None = None
    """When the API last said the bucket is full again (its ``-reset`` header)."""
    learned: int | None = None
    """The API's own limit, from its headers (None: only a limit set by hand made this bucket)."""

    @classmethod
    def full(cls, capacity: float, now: float) -> "TokenBucket":
        return cls(capacity=capacity, level=capacity, updated_at=now)

    @property
    def rate_per_s(self) -> float:
        return self.capacity / 60.0

    def level_at(self, when: float) -> float:
        """The level at ``when`` (not before the last update), without changing the bucket: the
        scheduler estimates future sends on the real buckets."""
        return min(self.capacity, self.level + self.rate_per_s * max(when - self.updated_at, 0.0))

    def refill(self, now: float) -> None:
        if now > self.updated_at:
            self.level = self.level_at(now)
            self.updated_at = now

    def seconds_until(self, amount: float, when: float) -> float:
        """How long after ``when`` ``amount`` may be taken: until it fits, or (larger than the
        bucket) until the bucket is full."""
        missing = min(amount, self.capacity) - self.level_at(when)
        return max(missing, 0.0) / self.rate_per_s

    def take(self, amount: float, now: float) -> None:
        self.refill(now)
        self.level -= amount

    def adjust(self, amount: float, now: float) -> None:
        """Give back what an estimate over-counted (``amount`` > 0), or take what it missed."""
        self.refill(now)
        self.level = min(self.capacity, self.level + amount)

    def consumed(self, now: float) -> float:
        self.refill(now)
        return self.capacity - self.level

    def resets_at(self, now: float) -> float:
        """When the bucket is full again: by our own count, or later if the API said so."""
        self.refill(now)
        ours = now + (self.capacity - self.level) / self.rate_per_s
        return max(ours, self.reset_at) if self.reset_at is not None and self.reset_at > now else ours

    def observe(self, signal: BucketSignal, ceiling: int | None, now: float) -> None:
        """Take in what a reply's headers say. The limit becomes the capacity (capped by a limit
        set by hand); the level never rises above the API's ``remaining``: the API also counts
        other clients of the organization, while requests we sent after this one are already
        taken out here, so the lower of the two is the safe one."""
        self.refill(now)
        if signal.limit:
            self.learned = signal.limit
            self.capacity = float(min(signal.limit, ceiling) if ceiling else signal.limit)
            self.level = min(self.level, self.capacity)
        if signal.remaining is not None:
            self.level = min(self.level, float(signal.remaining))
        if signal.reset_at is not None:
            self.reset_at = signal.reset_at

    def cap(self, ceiling: int | None, now: float) -> bool:
        """A limit set by hand came or went: the capacity is the API's limit under ``ceiling``.
        False when nothing limits this bucket any more (no ceiling, nothing learned)."""
        self.refill(now)
        if ceiling is None and self.learned is None:
            return False
        self.capacity = float(min(ceiling, self.learned) if ceiling and self.learned else ceiling or self.learned or 0)
        self.level = min(self.level, self.capacity)
        return True

    def view(self, now: float) -> dict[str, float]:
        self.refill(now)
        return {"limit": self.capacity, "remaining": max(self.level, 0.0), "resets_at": self.resets_at(now)}
