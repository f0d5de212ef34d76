"""The registry's limits, from an environment (by default this process's) with documented defaults."""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping

from pydantic import BaseModel, Field

from covey.common.flags import Names, env_flag, env_value

DEFAULT_MAX_DEPTH = 2
"""Main agent is depth 0; its children 1; grandchildren 2, which get no Agent tool."""
DEFAULT_MAX_CONCURRENT = 128
DEFAULT_STALL_MS = 600_000
DEFAULT_AUTO_BACKGROUND_MS = 120_000
ACTIVE_PER_CPU = 16
"""Background sub-agents at work at once per CPU of the cluster, unless ``COVEY_MAX_ACTIVE_AGENTS``
says: past it, a background launch waits its turn (docs/subagents.md#the-machines-share). On 2
cores, 100 background children finished 2.5x sooner with 20 to 40 at work than all at once."""


MAX_DEPTH_ENV = ("COVEY_MAX_SUBAGENT_SPAWN_DEPTH", "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH")
"""covey's name first: where both are set, it wins (covey/common/flags.py)."""


def _env_int(env: Mapping[str, str], names: Names, default: int) -> int:
    value = env_value(env, names)
    return int(value) if value is not None else default


def _env_optional_int(env: Mapping[str, str], name: str) -> int | None:
    value = env.get(name)
    return int(value) if value not in (None, "") else None


def _env_float(env: Mapping[str, str], name: str) -> float | None:
    value = env.get(name)
    return float(value) if value not in (None, "") else None


_FROM_ENV: dict[str, Callable[[Mapping[str, str]], Any]] = {
    "max_depth": lambda env: _env_int(env, MAX_DEPTH_ENV, DEFAULT_MAX_DEPTH),
    "max_concurrent": lambda env: _env_int(env, "COVEY_MAX_CONCURRENT_AGENTS", DEFAULT_MAX_CONCURRENT),
    "budget_usd": lambda env: _env_float(env, "COVEY_BUDGET_USD"),
    "stall_ms": lambda env: _env_int(env, "COVEY_STALL_TIMEOUT_MS", DEFAULT_STALL_MS),
    "auto_background_ms": lambda env: _env_int(env, "COVEY_AUTO_BACKGROUND_MS", DEFAULT_AUTO_BACKGROUND_MS),
    "queue_spawns": lambda env: env_flag(env, "COVEY_QUEUE_SPAWNS"),
    "max_active": lambda env: _env_optional_int(env, "COVEY_MAX_ACTIVE_AGENTS"),
}
"""Each limit as an environment sets it (or its default)."""


def _from_process_env(field: str) -> Callable[[], Any]:
    return lambda: _FROM_ENV[field](os.environ)


class Limits(BaseModel):
    """``Limits()`` reads this process's environment; ``Limits.from_env(env)`` a run's."""

    max_depth: int = Field(default_factory=_from_process_env("max_depth"), ge=0)
    """Deepest spawn depth a child may have (``COVEY_MAX_SUBAGENT_SPAWN_DEPTH``, else Claude Code's
    ``CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH``)."""
    max_concurrent: int = Field(default_factory=_from_process_env("max_concurrent"), ge=1)
    """Live sub-agents per session (``COVEY_MAX_CONCURRENT_AGENTS``)."""
    budget_usd: float | None = Field(default_factory=_from_process_env("budget_usd"))
    """Session dollar budget (``COVEY_BUDGET_USD``); None for no budget."""
    stall_ms: int = Field(default_factory=_from_process_env("stall_ms"), gt=0)
    """A child with no message or tool progress this long is aborted (``COVEY_STALL_TIMEOUT_MS``)."""
    auto_background_ms: int = Field(default_factory=_from_process_env("auto_background_ms"), gt=0)
    """A sync child running longer moves to the background (``COVEY_AUTO_BACKGROUND_MS``)."""
    queue_spawns: bool = Field(default_factory=_from_process_env("queue_spawns"))
    """Past ``max_concurrent``, a background launch waits in a queue instead of being refused
    (``COVEY_QUEUE_SPAWNS``, settings ``queueSpawns``); off by default, as Claude Code refuses."""
    max_active: int | None = Field(default_factory=_from_process_env("max_active"), ge=0)
    """Background sub-agents at work at once (running and not parked waiting for their own
    children), past which a background launch waits in the queue (``COVEY_MAX_ACTIVE_AGENTS``;
    0: no such wait); None: ``ACTIVE_PER_CPU`` per CPU of the cluster."""

    def active_limit(self, cpus: int) -> int | None:
        """``max_active`` on a cluster of ``cpus`` CPUs; None for no limit."""
        if self.max_active is None:
            return ACTIVE_PER_CPU * max(cpus, 1)
        return self.max_active or None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "Limits":
        """The limits ``env`` sets (its ``COVEY_*`` variables), the defaults for the rest."""
        return cls(**{field: read(env) for field, read in _FROM_ENV.items()})
