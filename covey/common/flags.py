"""On/off switches read from an environment: one rule for every ``COVEY_*`` / ``CLAUDE_CODE_*`` flag.

A setting covey shares with Claude Code is read under both names, covey's first: where both are
set, covey's own decides (``COVEY_MAX_SUBAGENT_SPAWN_DEPTH`` over ``CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH``).
"""

from __future__ import annotations

from typing import Mapping

TRUE_WORDS = ("1", "true", "yes", "on")

Names = str | tuple[str, ...]
"""One variable's name, or its names in order of precedence (covey's, then Claude Code's)."""


def truthy(value: str | None) -> bool:
    """Whether a flag's value turns it on (``1``, ``true``, ``yes``, ``on``, any case)."""
    return (value or "").strip().lower() in TRUE_WORDS


def env_value(env: Mapping[str, str], names: Names) -> str | None:
    """The value of the first of ``names`` set (not blank) in ``env``; None if none is."""
    for name in (names,) if isinstance(names, str) else names:
        value = env.get(name)
        if value is not None and value.strip():
            return value
    return None


def env_flag(env: Mapping[str, str], names: Names) -> bool:
    """Whether the first of ``names`` set in ``env`` is on (``COVEY_X=0`` beats ``CLAUDE_CODE_X=1``)."""
    return truthy(env_value(env, names))
