"""Token limits per model, and the settings that move them (docs/compaction.md#settings)."""

from __future__ import annotations

import pytest

from covey.errors import UserError
from covey.model.limits import LimitTable


def test_known_models_have_their_output_limits_and_unknown_ones_claude_codes_defaults():
    table = LimitTable.load()
    assert table.max_tokens("claude-sonnet-4-6") == 32_000
    assert table.max_tokens("claude-opus-4-8") == 64_000
    assert table.max_tokens("claude-3-5-haiku-20241022") == 8_192
    assert table.max_tokens("my-local-model") == 32_000
    assert table.window("claude-haiku-4-5") == 200_000 and table.window("claude-sonnet-4-6[1m]") == 1_000_000


def test_the_output_setting_is_capped_at_the_models_ceiling():
    assert LimitTable.load(env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "1000"}).max_tokens("claude-sonnet-4-6") == 1_000
    assert LimitTable.load(env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "100000"}).max_tokens("claude-sonnet-4-6") == 64_000
    assert LimitTable.load(env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "nope"}).max_tokens("claude-sonnet-4-6") == 32_000


def test_the_compaction_window_can_only_shrink():
    assert LimitTable.load(env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "50000"}).window("claude-sonnet-4-6") == 50_000
    assert LimitTable.load(env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "5000000"}).window("claude-sonnet-4-6") == 200_000


def test_settings_describe_models_covey_does_not_know():
    table = LimitTable.load({"local-": {"contextWindow": 8192, "maxOutputTokens": 2048}})
    assert (table.window("local-llama"), table.max_tokens("local-llama")) == (8_192, 2_048)
    assert table.max_tokens("claude-sonnet-4-6") == 32_000


def test_bad_settings_name_the_key():
    with pytest.raises(UserError, match="modelLimits"):
        LimitTable.load({"x": {"contextWindow": -1}})
    with pytest.raises(UserError, match="modelLimits"):
        LimitTable.load({"x": {"window": 100}})


def test_opus_5_has_the_window_claude_code_reports():
    table = LimitTable.load()
    assert (table.window("claude-opus-5-5"), table.of("claude-opus-5-5").output_ceiling) == (1_000_000, 128_000)
    assert table.of("claude-opus-4-1-20250805").output_ceiling == 32_000
