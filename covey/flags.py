"""On/off switches read from an environment: one rule for every ``COVEY_*`` / ``CLAUDE_CODE_*`` flag."""

from __future__ import annotations

from typing import Mapping

TRUE_WORDS = ("1", "true", "yes", "on")


def truthy(value: str | None) -> bool:
    """Whether a flag's value turns it on (``1``, ``true``, ``yes``, ``on``, any case)."""
    return (value or "").strip().lower() in TRUE_WORDS


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """Whether ``name`` is set on in ``env``."""
    return truthy(env.get(name))
