"""Token limits per model: the context window and the output limits, and the settings that move them.

Entries are matched by model-id prefix, longest first (like prices). An unknown model gets
Claude Code's defaults: a 200,000-token window, 32,000 output tokens by default and 64,000 at
most. ``CLAUDE_CODE_MAX_OUTPUT_TOKENS`` sets the output limit of every request (capped at the
model's upper limit); ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` shrinks the window compaction counts
with (never beyond the model's); settings' ``modelLimits`` (prefix → ``contextWindow`` /
``maxOutputTokens``) describe models covey does not know, a local model's small window say.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from covey.errors import UserError

MAX_OUTPUT_ENV = "CLAUDE_CODE_MAX_OUTPUT_TOKENS"
COMPACT_WINDOW_ENV = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"


class ModelLimits(BaseModel):
    """One model's token limits."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    context_window: int = Field(default=200_000, gt=0, alias="contextWindow")
    """Input plus output tokens one request may hold."""
    max_output_tokens: int = Field(default=32_000, gt=0, alias="maxOutputTokens")
    """A request's ``max_tokens`` unless a setting says otherwise."""
    upper_output_tokens: int | None = Field(default=None, gt=0, alias="upperOutputTokens")
    """The most a setting may ask for (default: 64,000, or ``max_output_tokens`` if higher)."""

    @property
    def output_ceiling(self) -> int:
        return self.upper_output_tokens or max(64_000, self.max_output_tokens)


def _limits(window: int, default: int, upper: int) -> ModelLimits:
    return ModelLimits(context_window=window, max_output_tokens=default, upper_output_tokens=upper)


DEFAULT_LIMITS: dict[str, ModelLimits] = {
    "claude-3-haiku": _limits(200_000, 4_096, 4_096),
    "claude-3-opus": _limits(200_000, 4_096, 4_096),
    "claude-3-5": _limits(200_000, 8_192, 8_192),
    "claude-3-7-sonnet": _limits(200_000, 32_000, 64_000),
    "claude-haiku-4": _limits(200_000, 32_000, 64_000),
    "claude-sonnet-4": _limits(200_000, 32_000, 64_000),
    "claude-opus-4": _limits(200_000, 32_000, 64_000),
    "claude-opus-4-1": _limits(200_000, 32_000, 32_000),
    "claude-opus-4-2": _limits(200_000, 32_000, 32_000),  # claude-opus-4-20250514
    "claude-opus-4-6": _limits(200_000, 64_000, 128_000),
    "claude-opus-4-7": _limits(200_000, 64_000, 128_000),
    "claude-opus-4-8": _limits(200_000, 64_000, 128_000),
    "claude-opus-5": _limits(1_000_000, 64_000, 128_000),  # as Claude Code 2.1.332 reports it
}
"""What the Messages API allows each family (the ``[1m]`` suffix asks for a 1M window)."""


class LimitTable(BaseModel):
    limits: dict[str, ModelLimits] = Field(default_factory=lambda: dict(DEFAULT_LIMITS))
    env: dict[str, str] = Field(default_factory=dict)
    """The run's environment: where the ``CLAUDE_CODE_*`` overrides are read."""

    def of(self, model_id: str) -> ModelLimits:
        matches = [prefix for prefix in self.limits if model_id.startswith(prefix)]
        found = self.limits[max(matches, key=len)] if matches else ModelLimits()
        if model_id.endswith("[1m]"):
            found = found.model_copy(update={"context_window": 1_000_000})
        return found

    def max_tokens(self, model_id: str) -> int:
        """A request's ``max_tokens``: ``CLAUDE_CODE_MAX_OUTPUT_TOKENS`` (at most the model's
        ceiling), else the model's default."""
        limits = self.of(model_id)
        wanted = _positive(self.env.get(MAX_OUTPUT_ENV), MAX_OUTPUT_ENV)
        return min(wanted, limits.output_ceiling) if wanted else limits.max_output_tokens

    def output_override(self) -> bool:
        """Whether a setting chose the output limit (then a cut-off reply is not retried higher)."""
        return _positive(self.env.get(MAX_OUTPUT_ENV), MAX_OUTPUT_ENV) is not None

    def window(self, model_id: str) -> int:
        """The window compaction counts with: the model's, or less by ``CLAUDE_CODE_AUTO_COMPACT_WINDOW``."""
        window = self.of(model_id).context_window
        wanted = _positive(self.env.get(COMPACT_WINDOW_ENV), COMPACT_WINDOW_ENV)
        return min(wanted, window) if wanted else window

    @classmethod
    def load(cls, overrides: Mapping[str, Any] | None = None, *, env: Mapping[str, str] | None = None) -> "LimitTable":
        """Defaults, then settings' ``modelLimits`` (prefix → limits) on top."""
        try:
            extra = {prefix: ModelLimits.model_validate(value) for prefix, value in (overrides or {}).items()}
        except (ValidationError, AttributeError) as exc:
            raise UserError(f"modelLimits: invalid model limits: {exc}") from exc
        return cls(limits={**DEFAULT_LIMITS, **extra}, env=dict(env or {}))


def _positive(value: str | None, name: str) -> int | None:
    """A positive integer setting; a bad value is ignored (as Claude Code does) with a warning."""
    if value is None or not value.strip():
        return None
    try:
        number = int(value.strip())
    except ValueError:
        number = 0
    if number <= 0:
        logging.getLogger(__name__).warning("%s=%r is not a positive number of tokens; ignored", name, value)
        return None
    return number
