"""What the rate scheduler learns from: headers, retry-after, settings, the identity; and the
``rate_limit_event`` line a wait becomes."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from covey.errors import UserError
from covey.ratelimit.signals import (BucketSignal, RateLimitSettings, counts_cache_reads, identity_for,
                                           model_class, parse_rate_headers, retry_after_s)
from covey.ratelimit.ports import RateRefused, Wait, rate_limit_event

NOW = datetime(2027, 1, 15, 8, 0, tzinfo=timezone.utc).timestamp()


def test_headers_of_the_three_buckets() -> None:
    found = parse_rate_headers({
        "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49",
        "anthropic-ratelimit-requests-reset": "2027-01-15T08:00:01Z",
        "ANTHROPIC-RATELIMIT-INPUT-TOKENS-LIMIT": "30000", "anthropic-ratelimit-input-tokens-remaining": "29000",
        "anthropic-ratelimit-input-tokens-reset": "2027-01-15T09:00:02+01:00",
        "anthropic-ratelimit-output-tokens-limit": "8000", "anthropic-ratelimit-output-tokens-reset": "yesterday",
        "anthropic-ratelimit-tokens-limit": "38000", "content-type": "application/json"})
    assert found["requests"] == BucketSignal(50, 49, NOW + 1)
    assert found["input_tokens"] == BucketSignal(30000, 29000, NOW + 2)  # RFC 3339 with an offset
    assert found["output_tokens"] == BucketSignal(8000, None, None)  # an unreadable reset is dropped
    assert parse_rate_headers({"anthropic-ratelimit-requests-limit": "-3", "x": "1"}) == {}


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "20"}, 20.0),
    ({"Retry-After": "1.5"}, 1.5),
    ({"retry-after-ms": "250", "retry-after": "20"}, 0.25),  # as the SDK: the finer one first
    ({"retry-after": "Fri, 15 Jan 2027 08:00:30 GMT"}, 30.0),
    ({"retry-after": "soon"}, None),
    ({"retry-after": "nan"}, None),
    ({}, None),
])
def test_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_s(headers, NOW) == expected


def test_model_classes_pool_a_family() -> None:
    assert model_class("claude-opus-4-7") == model_class("claude-opus-4-1-20250805") == "opus-4"
    assert model_class("claude-sonnet-4-6[1m]") == "sonnet-4"
    assert model_class("claude-3-5-haiku-20241022") == "haiku-3.5"
    assert model_class("my-local-model") == "my-local-model"
    assert not counts_cache_reads("sonnet-4") and not counts_cache_reads("opus-5")
    assert counts_cache_reads("haiku-3.5") and counts_cache_reads("opus-3")


def test_identity_never_holds_the_credential() -> None:
    first = identity_for("https://API.anthropic.com/", "sk-ant-secret", "claude-sonnet-4-6")
    assert "secret" not in first.key and first.base_url == "https://api.anthropic.com"
    assert first == identity_for("https://api.anthropic.com", "sk-ant-secret", "claude-sonnet-4-5")
    assert first != identity_for("https://api.anthropic.com", "sk-ant-other", "claude-sonnet-4-6")
    assert first != identity_for("https://gateway.example", "sk-ant-secret", "claude-sonnet-4-6")
    assert first != identity_for("https://api.anthropic.com", "sk-ant-secret", "claude-opus-4-7")


def test_limits_set_by_hand_from_settings_and_env() -> None:
    settings = RateLimitSettings.load({"requestsPerMinute": 60, "inputTokensPerMinute": 200_000},
                                      {"COVEY_RATE_LIMIT_RPM": "30", "COVEY_RATE_LIMIT_PATIENCE_S": "120"})
    assert settings.limit("requests") == 30  # the environment wins
    assert settings.limit("input_tokens") == 200_000 and settings.limit("output_tokens") is None
    assert settings.patience_s == 120
    assert RateLimitSettings().patience_s == 600  # ten minutes by default
    with pytest.raises(UserError, match="rate limit"):
        RateLimitSettings.load({}, {"COVEY_RATE_LIMIT_OUTPUT_TPM": "-5"})
    with pytest.raises(UserError, match="rate limit"):
        RateLimitSettings.load({"requestsPerMinut": 5})


def test_rate_limit_event_for_a_wait_as_claude_agent_sdk_parses_it() -> None:
    from claude_agent_sdk._internal.message_parser import parse_message
    from claude_agent_sdk.types import RateLimitEvent

    wait = Wait("req-1", NOW + 12, "input_tokens", "queue", 3, 2.0, consumed=150_000, limit_value=200_000,
                resets_at=NOW + 45, session_id="s", agent_id="agent-7")
    line = rate_limit_event(wait, session_id="sess-1", now=NOW)
    info = line["rate_limit_info"]
    assert line["type"] == "rate_limit_event" and line["session_id"] == "sess-1"
    assert info["status"] == "allowed_warning" and info["resetsAt"] == int(NOW + 45)
    assert info["utilization"] == 0.75 and info["apiLimit"] == "input_tokens" and info["waitMs"] == 12_000
    assert info["queuePosition"] == 3 and info["agentId"] == "agent-7"
    parsed = parse_message(line)
    assert isinstance(parsed, RateLimitEvent) and parsed.rate_limit_info.status == "allowed_warning"
    assert parsed.rate_limit_info.raw["apiLimit"] == "input_tokens"

    after_429 = Wait("req-1", NOW + 20, None, "rate_limit_error", 0, 0.0)
    assert rate_limit_event(after_429, session_id="s", now=NOW)["rate_limit_info"]["status"] == "rejected"
    refused = RateRefused("req-1", "requests", "queue", 600.0, 30.0, 600.0, consumed=60, limit_value=60,
                      resets_at=NOW + 60)
    refused_info = rate_limit_event(refused, session_id="s", now=NOW)["rate_limit_info"]
    assert refused_info["status"] == "rejected" and refused_info["refused"] is True
    assert refused_info["utilization"] == 1.0
