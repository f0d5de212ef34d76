"""Thinking, task budgets and betas: what the flags ask for and what each request carries."""

from __future__ import annotations

import pytest

from covey.cli import flags as cli_flags
from covey.errors import UserError
from covey.model.base import ModelRequest
from covey.model.effort import EFFORT_LEVELS
from covey.model.thinking import (DEFAULT_BUDGET, TASK_BUDGET_BETA, THINKING_DISPLAYS, THINKING_MODES, fit_thinking,
                                  task_budget, thinking_config, thinking_tokens_from_env)

OLD = "claude-sonnet-4-5"
ADAPTIVE = "claude-opus-4-6"


def test_no_flag_and_no_setting_means_no_thinking() -> None:
    assert thinking_config(OLD) is None and thinking_config(ADAPTIVE, always=False) is None


@pytest.mark.parametrize("model, fields, expected", [
    (OLD, {"max_tokens": 2000}, {"type": "enabled", "budget_tokens": 2000}),
    (OLD, {"max_tokens": 10}, {"type": "enabled", "budget_tokens": 1024}),  # the API's least
    (ADAPTIVE, {"max_tokens": 2000}, {"type": "adaptive"}),  # any N > 0 is adaptive there
    (OLD, {"max_tokens": 0}, None),
    (OLD, {"mode": "enabled"}, {"type": "enabled", "budget_tokens": DEFAULT_BUDGET}),
    (OLD, {"mode": "adaptive", "display": "omitted"}, {"type": "adaptive", "display": "omitted"}),
    (ADAPTIVE, {"mode": "disabled", "max_tokens": 5000}, None),  # --thinking wins over --max-thinking-tokens
    (ADAPTIVE, {"always": True}, {"type": "adaptive"}),  # settings' alwaysThinkingEnabled
    (ADAPTIVE, {"always": True, "max_tokens": 0}, None),  # a flag wins over the setting
])
def test_the_flags_become_the_apis_thinking(model: str, fields: dict, expected: dict | None) -> None:
    assert thinking_config(model, **fields) == expected


@pytest.mark.parametrize("fields, words", [
    ({"mode": "lots"}, "--thinking"), ({"display": "loud"}, "--thinking-display"),
    ({"max_tokens": -1}, "--max-thinking-tokens"),
])
def test_a_bad_value_names_its_flag(fields: dict, words: str) -> None:
    with pytest.raises(UserError, match=words):
        thinking_config(OLD, **fields)


def test_a_budget_stays_below_max_tokens_as_the_api_requires() -> None:
    assert fit_thinking({"type": "enabled", "budget_tokens": 31_999}, 8192) == (
        {"type": "enabled", "budget_tokens": 8191}, 8192)
    assert fit_thinking({"type": "adaptive"}, 8192) == ({"type": "adaptive"}, 8192)
    assert fit_thinking(None, 100) == (None, 100)


def test_a_task_budget_goes_only_to_the_models_that_take_it() -> None:
    assert task_budget("claude-opus-4-7", 50_000) == {"type": "tokens", "total": 50_000}
    assert task_budget("claude-sonnet-4-6", 50_000) is None and task_budget("claude-opus-4-7", None) is None
    with pytest.raises(UserError, match="--task-budget"):
        task_budget("claude-opus-4-7", 0)


def test_a_request_carries_effort_task_budget_and_every_beta_once() -> None:
    request = ModelRequest(model="claude-opus-4-5", effort="high", betas=["b-1", "effort-2025-11-24"],
                           task_budget={"type": "tokens", "total": 9}, thinking={"type": "adaptive"})
    kwargs = request.to_api_kwargs()
    assert kwargs["output_config"] == {"effort": "high", "task_budget": {"type": "tokens", "total": 9}}
    assert kwargs["extra_headers"] == {"anthropic-beta": f"b-1,effort-2025-11-24,{TASK_BUDGET_BETA}"}
    assert kwargs["thinking"] == {"type": "adaptive"}
    assert "extra_headers" not in ModelRequest(model="m").to_api_kwargs()


def test_the_thin_clients_lists_are_the_model_layers() -> None:
    assert cli_flags.EFFORT_LEVELS == EFFORT_LEVELS
    assert cli_flags.THINKING_MODES == THINKING_MODES and cli_flags.THINKING_DISPLAYS == THINKING_DISPLAYS


@pytest.mark.parametrize("env, expected", [({"MAX_THINKING_TOKENS": "8000"}, 8000), ({"MAX_THINKING_TOKENS": " 0 "}, 0),
                                           ({"MAX_THINKING_TOKENS": "lots"}, None), ({}, None), (None, None)])
def test_the_environments_thinking_budget_is_a_whole_number_or_nothing(env: dict | None, expected: int | None) -> None:
    assert thinking_tokens_from_env(env) == expected
