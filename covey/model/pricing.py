"""Prices per model, in USD per million tokens (web searches per 1,000), and the cost of a TokenUsage.

Entries are matched by model-id prefix, longest prefix first, so
``claude-haiku-4-5-20251001`` finds ``claude-haiku-4-5`` and a specific entry
wins over a family one. An unknown model costs 0.0: a local or proxied model
must not break budget checks, it just is not counted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from covey.errors import UserError
from covey.model.base import TokenUsage

PRICES_FILE_ENV = "COVEY_PRICES_FILE"
WEB_SEARCH_USD_PER_1000 = 10.0
"""The Messages API's web search tool: $10 per 1,000 searches, besides the tokens."""


class ModelPrice(BaseModel):
    """USD per million tokens of each kind."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float = Field(ge=0, alias="cacheWrite")
    """Cache creation (5-minute writes)."""
    cache_read: float = Field(ge=0, alias="cacheRead")
    web_search: float = Field(WEB_SEARCH_USD_PER_1000, ge=0, alias="webSearch")
    """USD per 1,000 server-side web searches (``usage.server_tool_use.web_search_requests``)."""


_HAIKU_45 = ModelPrice(input=1, output=5, cache_write=1.25, cache_read=0.10)
_HAIKU_3 = ModelPrice(input=0.80, output=4, cache_write=1.0, cache_read=0.08)
_SONNET = ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.30)
_OPUS = ModelPrice(input=15, output=75, cache_write=18.75, cache_read=1.50)

DEFAULT_PRICES: dict[str, ModelPrice] = {
    "claude-haiku-4": _HAIKU_45,
    "claude-3-5-haiku": _HAIKU_3,
    "claude-sonnet-4": _SONNET,
    "claude-3-7-sonnet": _SONNET,
    "claude-opus-4": _OPUS,
}


class PriceTable(BaseModel):
    """Model-id prefix → price; ``with_overrides`` layers settings or a file on top."""

    prices: dict[str, ModelPrice] = Field(default_factory=lambda: dict(DEFAULT_PRICES))

    def price_of(self, model_id: str) -> ModelPrice | None:
        matches = [prefix for prefix in self.prices if model_id.startswith(prefix)]
        return self.prices[max(matches, key=len)] if matches else None

    def cost_usd(self, model_id: str, usage: TokenUsage) -> float:
        price = self.price_of(model_id)
        if price is None:
            return 0.0
        return (
            usage.input_tokens * price.input
            + usage.output_tokens * price.output
            + usage.cache_creation_input_tokens * price.cache_write
            + usage.cache_read_input_tokens * price.cache_read
        ) / 1_000_000 + usage.web_search_requests * price.web_search / 1000

    def with_overrides(self, overrides: Mapping[str, Any], *, source: str = "modelPrices") -> "PriceTable":
        """A copy with ``overrides`` (prefix → price dict, e.g. settings ``modelPrices``) on top."""
        try:
            extra = {prefix: ModelPrice.model_validate(price) for prefix, price in overrides.items()}
        except (ValidationError, AttributeError) as exc:
            raise UserError(f"{source}: invalid model prices: {exc}") from exc
        return PriceTable(prices={**self.prices, **extra})

    @classmethod
    def load(cls, overrides: Mapping[str, Any] | None = None, *, env: Mapping[str, str] | None = None) -> "PriceTable":
        """Defaults, then ``$COVEY_PRICES_FILE`` (JSON), then ``overrides`` (settings win).

        ``env``: the run's environment, where ``COVEY_PRICES_FILE`` is looked up (default: this process's).
        """
        table = cls()
        path = (os.environ if env is None else env).get(PRICES_FILE_ENV)
        if path:
            table = table.with_overrides(_read_json(Path(path)), source=path)
        return table.with_overrides(overrides or {})


def _read_json(path: Path) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{PRICES_FILE_ENV}={str(path)!r}: cannot read prices: {exc}") from exc
    if not isinstance(data, dict):
        raise UserError(f"{PRICES_FILE_ENV}={str(path)!r}: expected a JSON object of model prices")
    return data
