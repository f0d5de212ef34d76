"""The rate scheduler's values: a request to admit, its three answers, the refusal error, and the
``rate_limit_event`` line a wait is reported as.

``admit`` answers ``Admitted`` (send now), ``Wait`` (ask again at ``until``) or ``RateRefused`` (the
wait would outlast the request's patience; ``error()`` is the ``LimitExceeded`` to fail with).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from covey.errors import CoveyError, LimitExceeded
from covey.ratelimit.signals import LIMIT_LABELS, LimitName

WaitCause = Literal["queue", "rate_limit_error", "overloaded_error"]
"""Why a request waits: the scheduler's own pacing, or the API's 429 / 529 ``retry-after``."""


@dataclass(frozen=True)
class AdmitRequest:
    """One model request, before it is sent."""

    request_id: str
    input_tokens: int
    """The caller's estimate of the whole prompt (cached parts included)."""
    max_tokens: int
    """The request's ``max_tokens``: the API counts it against the output limit until the reply."""
    cache_read_tokens: int = 0
    """The part of ``input_tokens`` the caller expects to be read from the prompt cache."""
    session_id: str = ""
    agent_id: str = ""
    foreground: bool = False
    """Someone waits on it (the main agent, a sync child): served before its session's background work."""
    patience_s: float | None = None
    """This request's patience (default: the scheduler's)."""


@dataclass(frozen=True)
class Admitted:
    request_id: str
    waited_s: float


@dataclass(frozen=True)
class Wait:
    """Not yet: ask again at ``until`` (the scheduler's estimate; a 429/529's ``retry-after``)."""

    request_id: str
    until: float
    limit: LimitName | None
    """The limit that holds the request back (None: unknown, as after a 529)."""
    cause: WaitCause
    position: int
    """Requests served before this one (0: it is next)."""
    waited_s: float
    consumed: float | None = None
    limit_value: float | None = None
    resets_at: float | None = None
    new: bool = True
    """The first answer of this wait (a new limit or cause): the one to report, once."""
    session_id: str = ""
    agent_id: str = ""


@dataclass(frozen=True)
class RateRefused:
    """The request would wait past its patience."""

    request_id: str
    limit: LimitName | None
    cause: WaitCause
    waited_s: float
    would_wait_s: float
    patience_s: float
    consumed: float | None = None
    limit_value: float | None = None
    resets_at: float | None = None
    session_id: str = ""
    agent_id: str = ""

    def message(self, now: float) -> str:
        what = f"the {LIMIT_LABELS[self.limit]} limit" if self.limit else _CAUSE_WORDS[self.cause]
        if self.limit_value is not None:
            what += f" ({self.limit_value:,.0f})"
        parts = [f"Rate limit: {what}"]
        if self.consumed is not None:
            parts.append(f"{self.consumed:,.0f} consumed")
        if self.resets_at is not None:
            parts.append(f"the window resets at {_rfc3339(self.resets_at)} (in {max(self.resets_at - now, 0):.0f} s)")
        return (", ".join(parts) + f"; waited {self.waited_s:.0f} s and would wait {self.would_wait_s:.0f} s more, past "
                f"the patience of {self.patience_s:.0f} s. Raise COVEY_RATE_LIMIT_PATIENCE_S (settings "
                "rateLimits.patienceSeconds) or run fewer agents at once.")

    def error(self, now: float) -> "RateLimitRefused":
        return RateLimitRefused(self.message(now), self.limit, self.consumed, self.limit_value, self.resets_at)


_CAUSE_WORDS: dict[WaitCause, str] = {"queue": "the API's rate limit", "rate_limit_error": "the API's rate limit (429)",
                                      "overloaded_error": "the API is overloaded (529)"}

RateDecision = Admitted | Wait | RateRefused


class RateLimitRefused(LimitExceeded):
    """A model request waited for the API's limits as long as its patience allowed."""

    def __init__(self, message: str, rate_limit: LimitName | None = None, consumed: float | None = None,
                 limit_value: float | None = None, resets_at: float | None = None) -> None:
        # All fields in ``args`` so the error survives pickling across actors (``type(e)(*e.args)``).
        CoveyError.__init__(self, message, rate_limit, consumed, limit_value, resets_at)
        self.limit = None
        self.rate_limit = rate_limit
        """Which API limit: requests / input tokens / output tokens per minute (None: a 529)."""
        self.consumed = consumed
        self.limit_value = limit_value
        self.resets_at = resets_at
        """Epoch seconds when the window is full again."""


@dataclass(frozen=True)
class WaitingEntry:
    request_id: str
    session_id: str
    agent_id: str
    foreground: bool
    waited_s: float
    limit: LimitName | None


@dataclass(frozen=True)
class RateSnapshot:
    """The scheduler's state, for ``covey status`` and the trace."""

    identity: str
    queued: int
    in_flight: int
    buckets: dict[str, dict[str, float]]
    paused_until: float | None
    next_reset: float | None
    waiting: list[WaitingEntry] = field(default_factory=list)
    leases: int = 0
    """Slices of the buckets lent to gateways (``covey.ratelimit.lease``)."""


def rate_limit_event(decision: Wait | RateRefused, *, session_id: str, now: float,
                     event_uuid: str | None = None) -> dict[str, Any]:
    """A Claude Code-shaped ``rate_limit_event`` stream-json line for a wait or a refusal.

    claude-agent-sdk reads ``rate_limit_info.status`` (``allowed_warning``: held back, will be
    sent; ``rejected``: the API refused it, or its patience ran out), ``resetsAt`` (epoch
    seconds) and ``utilization`` (0..1) and keeps the rest in ``raw``: the API limit's details
    go there. ``rateLimitType`` is left out: the SDK's values name subscription windows
    (``five_hour``...), not the API's per-minute limits.
    """
    rejected = isinstance(decision, RateRefused) or decision.cause != "queue"
    info: dict[str, Any] = {"status": "rejected" if rejected else "allowed_warning"}
    if decision.resets_at is not None:
        info["resetsAt"] = int(decision.resets_at)
    if decision.consumed is not None and decision.limit_value:
        info["utilization"] = round(min(max(decision.consumed / decision.limit_value, 0.0), 1.0), 4)
    info["apiLimit"] = decision.limit
    info["cause"] = decision.cause
    info["limitValue"] = decision.limit_value
    info["consumed"] = decision.consumed
    info["agentId"] = decision.agent_id or None
    if isinstance(decision, Wait):
        info["waitMs"] = int(max(decision.until - now, 0.0) * 1000)
        info["queuePosition"] = decision.position
    else:
        info["refused"] = True
    return {"type": "rate_limit_event", "rate_limit_info": info, "uuid": event_uuid or str(uuid.uuid4()),
            "session_id": session_id}


def _rfc3339(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
