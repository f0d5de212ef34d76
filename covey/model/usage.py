"""Tokens and cost per model, as Claude Code's result reports them (``modelUsage``).

Each agent run counts its requests per model (the model that answered); the
registry sums the runs into the session's ``modelUsage``.
"""

from __future__ import annotations

from typing import Mapping

from pydantic import BaseModel, ConfigDict, Field

from covey.model.base import TokenUsage
from covey.model.limits import DEFAULT_LIMITS


class ModelUsage(BaseModel):
    """One model's requests summed: Claude Code's ``modelUsage`` entry (camelCase on the wire)."""

    model_config = ConfigDict(populate_by_name=True)

    input_tokens: int = Field(0, alias="inputTokens")
    output_tokens: int = Field(0, alias="outputTokens")
    cache_read_input_tokens: int = Field(0, alias="cacheReadInputTokens")
    cache_creation_input_tokens: int = Field(0, alias="cacheCreationInputTokens")
    web_search_requests: int = Field(0, alias="webSearchRequests")
    cost_usd: float = Field(0.0, alias="costUSD")
    context_window: int = Field(0, alias="contextWindow")
    max_output_tokens: int = Field(0, alias="maxOutputTokens")
    cache_creation_5m_input_tokens: int = Field(0, alias="cacheCreationEphemeral5mInputTokens")
    """covey's cache breakpoints are all default (5 minute) ephemeral ones: every cache write is one."""
    cache_creation_1h_input_tokens: int = Field(0, alias="cacheCreationEphemeral1hInputTokens")
    canonical_model: str = Field("", alias="canonicalModel")
    """The model id (covey resolves aliases before a request)."""
    provider: str = "firstParty"
    """covey speaks the Anthropic Messages API (a proxy at ``ANTHROPIC_BASE_URL`` included)."""
    cost_basis: str = Field("list", alias="costBasis")
    """Costs come from a list-price table (``covey.model.pricing``)."""

    @classmethod
    def of(cls, model_id: str, usage: TokenUsage, cost_usd: float) -> "ModelUsage":
        context_window, max_output_tokens = _limits(model_id)
        return cls(**usage.model_dump(), cost_usd=cost_usd, context_window=context_window,
                   max_output_tokens=max_output_tokens, canonical_model=model_id,
                   cache_creation_5m_input_tokens=usage.cache_creation_input_tokens)

    def __add__(self, other: "ModelUsage") -> "ModelUsage":
        summed = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                  "web_search_requests", "cost_usd", "cache_creation_5m_input_tokens", "cache_creation_1h_input_tokens")
        return self.model_copy(update={name: getattr(self, name) + getattr(other, name) for name in summed})


def add_usage(by_model: Mapping[str, ModelUsage], model_id: str, usage: TokenUsage, cost_usd: float) -> dict[str, ModelUsage]:
    """``by_model`` with one more request of ``model_id``."""
    return merge_usage(by_model, {model_id: ModelUsage.of(model_id, usage, cost_usd)})


def merge_usage(*parts: Mapping[str, ModelUsage]) -> dict[str, ModelUsage]:
    """Per-model sums of several runs' usage."""
    merged: dict[str, ModelUsage] = {}
    for part in parts:
        for model_id, usage in part.items():
            merged[model_id] = merged[model_id] + usage if model_id in merged else usage
    return merged


def _limits(model_id: str) -> tuple[int, int]:
    """(context window, most output tokens) as ``modelUsage`` reports them, from the one limits
    table; an unknown model (local, proxied) reports 0 for both."""
    matches = [prefix for prefix in DEFAULT_LIMITS if model_id.startswith(prefix)]
    if not matches:
        return 0, 0
    limits = DEFAULT_LIMITS[max(matches, key=len)]
    return limits.context_window, limits.output_ceiling
