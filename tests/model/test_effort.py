"""Effort levels, and what a request to each model carries (covey/model/effort.py)."""

from __future__ import annotations

import pytest

from covey.model.base import ModelRequest
from covey.model.effort import effort_from_env, is_effort, model_effort_levels, request_effort


@pytest.mark.parametrize("model_id, effort, sent", [
    ("claude-opus-4-8", "xhigh", "xhigh"),
    ("claude-opus-4-8", "max", "max"),
    ("claude-sonnet-4-6", "medium", "medium"),
    ("claude-sonnet-4-6", "max", "max"),
    ("claude-sonnet-4-6", "xhigh", "high"),  # a level the model lacks goes as high
    ("claude-opus-4-5-20251101", "max", "high"),
    ("claude-opus-4-5-20251101", "low", "low"),
    ("us.anthropic.claude-opus-4-6-v1", "low", "low"),
    ("claude-haiku-4-5", "low", None),  # Haiku takes no effort: the API would answer 400
    ("claude-sonnet-4-5", "low", None),
    ("claude-sonnet-4-20250514", "low", None),
    ("my-local-model", "low", None),
    ("claude-opus-4-8", 40, None),  # an integer is accepted in a definition, never sent
    ("claude-opus-4-8", None, None),
])
def test_request_effort_fits_the_model(model_id, effort, sent):
    assert request_effort(model_id, effort) == sent


def test_levels_and_values_claude_code_accepts():
    assert model_effort_levels("claude-opus-4-8") == ("low", "medium", "high", "xhigh", "max")
    assert is_effort("low") and is_effort(3) and not is_effort("extreme") and not is_effort(True)


def test_the_session_effort_comes_from_claude_codes_variable():
    assert effort_from_env({"CLAUDE_CODE_EFFORT_LEVEL": "High"}) == "high"
    assert effort_from_env({"CLAUDE_CODE_EFFORT_LEVEL": "auto"}) is None
    assert effort_from_env({}) is None and effort_from_env(None) is None


def test_the_request_sends_effort_as_output_config_with_opus_4_5_s_beta():
    kwargs = ModelRequest(model="claude-opus-4-8", effort="low").to_api_kwargs()
    assert kwargs["output_config"] == {"effort": "low"} and "extra_headers" not in kwargs
    beta = ModelRequest(model="claude-opus-4-5", effort="low").to_api_kwargs()
    assert beta["extra_headers"] == {"anthropic-beta": "effort-2025-11-24"}
    assert "output_config" not in ModelRequest(model="claude-opus-4-8").to_api_kwargs()
