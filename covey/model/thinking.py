"""Extended thinking and task budgets: what a session's flags ask for, and what a request to a
given model carries (docs/cli.md#thinking-effort-and-betas).

Claude Code's flags: ``--thinking adaptive|enabled|disabled``, ``--max-thinking-tokens N`` (on
models with adaptive thinking any N > 0 means adaptive, 0 means off), ``--thinking-display
summarized|omitted``, settings' ``alwaysThinkingEnabled``; ``--task-budget N`` (the API's
``output_config.task_budget`` behind its beta header, on the models that take it). Only the
main agent thinks; a fork sends its parent's thinking (the same request bytes).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from covey.errors import UserError

THINKING_MODES = ("adaptive", "enabled", "disabled")
THINKING_DISPLAYS = ("summarized", "omitted")
DEFAULT_BUDGET = 31_999
"""The thinking budget of ``--thinking enabled`` (or ``alwaysThinkingEnabled``) on a model
without adaptive thinking (``fit_thinking`` keeps it below the request's ``max_tokens``)."""
MIN_BUDGET = 1024
"""The API's smallest ``budget_tokens``."""
TASK_BUDGET_BETA = "task-budgets-2026-03-13"
THINKING_ENV = "MAX_THINKING_TOKENS"
"""The environment's thinking budget, as ``--max-thinking-tokens`` (which wins over it), in Claude Code."""

_VERSION = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)")


def _version(model_id: str) -> tuple[str, tuple[int, int]] | None:
    match = _VERSION.search(model_id)
    if match is None:
        return None
    return match.group(1), (int(match.group(2)), int(match.group(3) or 0))


def adaptive_thinking(model_id: str) -> bool:
    """Whether ``model_id`` thinks adaptively (Opus and Sonnet 4.6 and later, every 5.x model)."""
    found = _version(model_id)
    if found is None:
        return False
    family, version = found
    return version >= (5, 0) or (family != "haiku" and version >= (4, 6))


def takes_task_budget(model_id: str) -> bool:
    """Whether ``model_id`` takes ``output_config.task_budget`` (Opus 4.7 and later, every 5.x model)."""
    found = _version(model_id)
    if found is None:
        return False
    family, version = found
    return version >= (5, 0) or (family == "opus" and version >= (4, 7))


def thinking_tokens_from_env(env: Mapping[str, str] | None) -> int | None:
    """The budget ``MAX_THINKING_TOKENS`` sets in the run's environment; None when unset or not a whole number."""
    value = (env or {}).get(THINKING_ENV, "").strip()
    return int(value) if value.isdigit() else None


def thinking_config(model_id: str, *, mode: str | None = None, max_tokens: int | None = None,
                    display: str | None = None, always: bool | None = None) -> dict[str, Any] | None:
    """The API's ``thinking`` for the main agent's requests; None: no thinking.

    ``mode`` wins over ``max_tokens`` (as the SDK's ``thinking`` over ``max_thinking_tokens``);
    with neither, settings' ``alwaysThinkingEnabled`` turns it on."""
    if mode is not None and mode not in THINKING_MODES:
        raise UserError(f"--thinking: {mode!r} is not one of {', '.join(THINKING_MODES)}")
    if display is not None and display not in THINKING_DISPLAYS:
        raise UserError(f"--thinking-display: {display!r} is not one of {', '.join(THINKING_DISPLAYS)}")
    if max_tokens is not None and max_tokens < 0:
        raise UserError(f"--max-thinking-tokens: {max_tokens} is below 0")
    if mode is None:
        mode = ("disabled" if max_tokens == 0 else "enabled") if max_tokens is not None else (
            "enabled" if always else None)
    if mode in (None, "disabled"):
        return None
    if mode == "adaptive" or adaptive_thinking(model_id):
        config: dict[str, Any] = {"type": "adaptive"}
    else:
        config = {"type": "enabled", "budget_tokens": max(MIN_BUDGET, max_tokens or DEFAULT_BUDGET)}
    if display is not None:
        config["display"] = display
    return config


def fit_thinking(thinking: dict[str, Any] | None, max_tokens: int) -> tuple[dict[str, Any] | None, int]:
    """``thinking`` and ``max_tokens`` as one request may carry them: the API wants a budget of at
    least 1,024 tokens and below ``max_tokens`` (the model's output limit), so a larger budget is
    cut to ``max_tokens - 1``, as Claude Code sends 31,999 under 32,000."""
    if not thinking or thinking.get("type") != "enabled":
        return thinking, max_tokens
    max_tokens = max(max_tokens, MIN_BUDGET + 1)
    budget = min(max(int(thinking.get("budget_tokens", DEFAULT_BUDGET)), MIN_BUDGET), max_tokens - 1)
    return {**thinking, "budget_tokens": budget}, max_tokens


def task_budget(model_id: str, total: int | None) -> dict[str, Any] | None:
    """``output_config.task_budget`` for a request to ``model_id``; None where the model takes none
    (the API answers 400 to it there)."""
    if total is None or not takes_task_budget(model_id):
        return None
    if total <= 0:
        raise UserError(f"--task-budget: {total} is not a positive number of tokens")
    return {"type": "tokens", "total": total}
