"""What the rate scheduler learns limits from: reply headers, ``retry-after``, and limits set by hand.

The Messages API limits each organization per model class with three token buckets per minute
(requests, input tokens, output tokens) and reports them on every reply as
``anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}``; ``reset``
is the RFC 3339 time the bucket is full again. A 429 (``rate_limit_error``) or 529
(``overloaded_error``) carries ``retry-after`` in seconds. Header values come from the network:
a value that does not parse is ignored, never raised.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from covey.errors import UserError

LimitName = Literal["requests", "input_tokens", "output_tokens"]
LIMIT_NAMES: tuple[LimitName, ...] = ("requests", "input_tokens", "output_tokens")
LIMIT_LABELS: dict[LimitName, str] = {
    "requests": "requests per minute",
    "input_tokens": "input tokens per minute",
    "output_tokens": "output tokens per minute",
}
_HEADER_PART: dict[LimitName, str] = {"requests": "requests", "input_tokens": "input-tokens",
                                      "output_tokens": "output-tokens"}

ENV_NAMES: dict[str, str] = {
    "requests_per_minute": "COVEY_RATE_LIMIT_RPM",
    "input_tokens_per_minute": "COVEY_RATE_LIMIT_INPUT_TPM",
    "output_tokens_per_minute": "COVEY_RATE_LIMIT_OUTPUT_TPM",
    "patience_s": "COVEY_RATE_LIMIT_PATIENCE_S",
}
DEFAULT_PATIENCE_S = 600.0

_log = logging.getLogger(__name__)


class RateLimitSettings(BaseModel):
    """Limits set by hand (settings ``rateLimits``, or ``COVEY_RATE_LIMIT_*``), for gateways that
    send no headers; with headers, a limit set here is a ceiling under the API's own."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    requests_per_minute: int | None = Field(default=None, gt=0, alias="requestsPerMinute")
    input_tokens_per_minute: int | None = Field(default=None, gt=0, alias="inputTokensPerMinute")
    output_tokens_per_minute: int | None = Field(default=None, gt=0, alias="outputTokensPerMinute")
    patience_s: float = Field(default=DEFAULT_PATIENCE_S, gt=0, alias="patienceSeconds")
    """How long a request may wait for the limits before it fails with the limit named."""

    def limit(self, name: LimitName) -> int | None:
        return {"requests": self.requests_per_minute, "input_tokens": self.input_tokens_per_minute,
                "output_tokens": self.output_tokens_per_minute}[name]

    @classmethod
    def load(cls, settings: Mapping[str, object] | None = None, env: Mapping[str, str] | None = None) -> "RateLimitSettings":
        """Settings' ``rateLimits`` object, then ``COVEY_RATE_LIMIT_*`` on top (env wins, as for
        other covey settings). A bad value is the person's to fix: ``UserError`` naming it."""
        values: dict[str, object] = dict(settings or {})
        for field, name in ENV_NAMES.items():
            if (raw := (env or {}).get(name, "").strip()):
                values[cls.model_fields[field].alias or field] = raw
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise UserError(f"rateLimits / COVEY_RATE_LIMIT_*: invalid rate limit setting: {exc}") from exc


@dataclass(frozen=True)
class Identity:
    """Who a limit belongs to: base URL, a hash of the credential (never the credential), model class."""

    base_url: str
    credential_hash: str
    model_class: str

    @property
    def key(self) -> str:
        return f"{self.base_url}|{self.credential_hash}|{self.model_class}"


def identity_for(base_url: str, credential: str, model: str) -> Identity:
    digest = hashlib.sha256(credential.encode()).hexdigest()[:16]
    return Identity(base_url.rstrip("/").lower(), digest, model_class(model))


_FAMILY = re.compile(r"^claude-(?:(?P<family>opus|sonnet|haiku)-(?P<major>\d+)|(?P<old>\d+(?:-\d+)?)-(?P<old_family>opus|sonnet|haiku))")


def model_class(model: str) -> str:
    """The pool a model's limits belong to: the API pools a family's versions (every Opus 4.x
    shares one limit); an unknown model is its own class."""
    match = _FAMILY.match(model.removesuffix("[1m]"))
    if not match:
        return model
    if match["family"]:
        return f"{match['family']}-{match['major']}"
    return f"{match['old_family']}-{match['old'].replace('-', '.')}"


def counts_cache_reads(model_class_name: str) -> bool:
    """Whether cache reads count toward the input-token limit: only for the Claude 3 models;
    current models exclude them (the API's rate-limit page)."""
    return bool(re.match(r"^(opus|sonnet|haiku)-3", model_class_name))


@dataclass(frozen=True)
class BucketSignal:
    """One bucket as a reply's headers describe it (any part may be missing)."""

    limit: int | None = None
    remaining: int | None = None
    reset_at: float | None = None
    """Epoch seconds when the bucket is full again."""


def parse_rate_headers(headers: Mapping[str, str]) -> dict[LimitName, BucketSignal]:
    """The buckets a reply's ``anthropic-ratelimit-*`` headers describe (case-insensitive names)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    found: dict[LimitName, BucketSignal] = {}
    for name in LIMIT_NAMES:
        prefix = f"anthropic-ratelimit-{_HEADER_PART[name]}-"
        signal = BucketSignal(_int(lowered.get(prefix + "limit")), _int(lowered.get(prefix + "remaining")),
                              _rfc3339(lowered.get(prefix + "reset")))
        if signal != BucketSignal():
            found[name] = signal
    return found


def retry_after_s(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait from ``retry-after-ms`` (the SDK honours it first) or ``retry-after``
    (seconds, or an HTTP date); None when absent or unreadable."""
    lowered = {name.lower(): value for name, value in headers.items()}
    if (ms := _float(lowered.get("retry-after-ms"))) is not None and ms >= 0:
        return ms / 1000
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    if (seconds := _float(raw)) is not None:
        return max(seconds, 0.0)
    try:
        return max(parsedate_to_datetime(raw).timestamp() - now, 0.0)
    except (TypeError, ValueError):
        _log.debug("unreadable retry-after header %r ignored", raw)
        return None


def _int(value: str | None) -> int | None:
    number = _float(value)
    return int(number) if number is not None and number >= 0 else None


def _float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        _log.debug("unreadable rate-limit header value %r ignored", value)
        return None
    return number if number == number and number not in (float("inf"), float("-inf")) else None


def _rfc3339(value: str | None) -> float | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        _log.debug("unreadable rate-limit reset %r ignored", value)
        return None
    # A time without a zone is not RFC 3339; the API always sends one, so treat a bare time as UTC.
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=timezone.utc).timestamp()
    return parsed.timestamp()
