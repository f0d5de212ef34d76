"""The registry's limits, from the environment with documented defaults."""

from __future__ import annotations

import os

from pydantic import BaseModel, Field

DEFAULT_MAX_DEPTH = 2
"""Main agent is depth 0; its children 1; grandchildren 2, which get no Agent tool."""
DEFAULT_MAX_CONCURRENT = 128
DEFAULT_STALL_MS = 600_000
DEFAULT_AUTO_BACKGROUND_MS = 120_000


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def _env_float(name: str) -> float | None:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else None


class Limits(BaseModel):
    max_depth: int = Field(default_factory=lambda: _env_int("COVEY_MAX_SUBAGENT_SPAWN_DEPTH", DEFAULT_MAX_DEPTH), ge=0)
    """Deepest spawn depth a child may have (``COVEY_MAX_SUBAGENT_SPAWN_DEPTH``)."""
    max_concurrent: int = Field(default_factory=lambda: _env_int("COVEY_MAX_CONCURRENT_AGENTS", DEFAULT_MAX_CONCURRENT), ge=1)
    """Live sub-agents per session (``COVEY_MAX_CONCURRENT_AGENTS``)."""
    budget_usd: float | None = Field(default_factory=lambda: _env_float("COVEY_BUDGET_USD"))
    """Session dollar budget (``COVEY_BUDGET_USD``); None for no budget."""
    stall_ms: int = Field(default_factory=lambda: _env_int("COVEY_STALL_TIMEOUT_MS", DEFAULT_STALL_MS), gt=0)
    """A child with no message or tool progress this long is aborted (``COVEY_STALL_TIMEOUT_MS``)."""
    auto_background_ms: int = Field(
        default_factory=lambda: _env_int("COVEY_AUTO_BACKGROUND_MS", DEFAULT_AUTO_BACKGROUND_MS), gt=0
    )
    """A sync child running longer moves to the background (``COVEY_AUTO_BACKGROUND_MS``)."""
