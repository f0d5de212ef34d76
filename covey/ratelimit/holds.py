"""Limits set by hand, held by the runs that set them.

A project's settings.json ``rateLimits`` (or ``COVEY_RATE_LIMIT_*``) is that run's word on its
API identity's limits, for gateways that send no headers (with headers, a ceiling under the
API's own). The shared scheduler of the identity applies it while the run sends requests and
lets it go once the run has sent none for ``HOLD_S``: a cloned project's limits do not throttle
the user's later sessions on the same identity. While several runs hold limits, the lowest of
each applies (each said its account allows no more). Limits given when a scheduler is made
(``base``: one caller's own scheduler, ``LocalAdmission``) never lapse.
"""

from __future__ import annotations

from covey.ratelimit.signals import LIMIT_NAMES, LimitName, RateLimitSettings

HOLD_S = 120.0
"""How long a run's limits stay in force after its last request."""


class HandLimits:
    """The limits set by hand in force for one identity, and each holder's patience."""

    def __init__(self, base: RateLimitSettings | None = None, hold_s: float = HOLD_S) -> None:
        self.base, self.hold_s = base or RateLimitSettings(), hold_s
        self._held: dict[str, tuple[RateLimitSettings, float]] = {}
        self._limits = self._lowest()

    @property
    def limits(self) -> dict[LimitName, int]:
        """Each limit in force (a name absent: none set by hand)."""
        return self._limits

    def hold(self, holder: str, settings: RateLimitSettings | None, now: float) -> bool:
        """``holder`` (a session) sent a request at ``now`` with ``settings``; let go of the holds
        not renewed for ``hold_s``. True when the limits in force changed."""
        if settings is not None and settings != RateLimitSettings():
            self._held[holder] = (settings, now)
        else:
            self._held.pop(holder, None)
        self._held = {h: (s, at) for h, (s, at) in self._held.items() if now - at <= self.hold_s}
        before, self._limits = self._limits, self._lowest()
        return self._limits != before

    def patience_s(self, holder: str) -> float:
        """How long ``holder``'s requests may wait: its own setting, else the base one."""
        held = self._held.get(holder)
        return (held[0] if held else self.base).patience_s

    def _lowest(self) -> dict[LimitName, int]:
        every = [self.base, *(settings for settings, _ in self._held.values())]
        lowest: dict[LimitName, int] = {}
        for name in LIMIT_NAMES:
            values = [limit for settings in every if (limit := settings.limit(name))]
            if values:
                lowest[name] = min(values)
        return lowest
