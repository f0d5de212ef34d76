"""Reasoning effort: its levels, and what a request to a given model carries (docs/definitions.md#effort).

Claude Code sends an agent's effort as the Messages API's ``output_config:
{"effort": level}``, and only to models that take it: a level a model lacks is
sent as ``high``, and a model without effort (Haiku 4.5, Sonnet 4.5 and older)
gets none, since the API answers 400 to it.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Mapping, Union, get_args

EffortLevel = Literal["low", "medium", "high", "xhigh", "max"]
EFFORT_LEVELS: tuple[str, ...] = get_args(EffortLevel)
Effort = Union[EffortLevel, int]
"""What a definition's ``effort`` may say: a level, or an integer (Claude Code accepts one;
the public API takes only the levels, so an integer is never sent)."""

EFFORT_ENV = "CLAUDE_CODE_EFFORT_LEVEL"
"""Claude Code's variable for the session's effort (``auto`` or ``unset``: none)."""
OPUS_4_5_BETA = "effort-2025-11-24"
"""Opus 4.5 takes effort only with this beta header."""

_VERSION = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)")
_BASIC = ("low", "medium", "high")


def is_effort(value: Any) -> bool:
    """A value Claude Code accepts for ``effort``: a level, or an integer."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or value in EFFORT_LEVELS


def effort_from_env(env: Mapping[str, str] | None) -> str | None:
    """The session effort ``CLAUDE_CODE_EFFORT_LEVEL`` sets in the run's environment, if a level."""
    value = (env or {}).get(EFFORT_ENV, "").strip().lower()
    return value if value in EFFORT_LEVELS else None


def request_effort(model_id: str, effort: Any) -> str | None:
    """The ``output_config.effort`` a request to ``model_id`` carries for ``effort``; None: none."""
    if not isinstance(effort, str) or effort not in EFFORT_LEVELS:
        return None
    levels = model_effort_levels(model_id)
    if not levels:
        return None
    return effort if effort in levels else "high"


def model_effort_levels(model_id: str) -> tuple[str, ...]:
    """The effort levels ``model_id`` takes (empty: it takes no effort, or covey cannot tell)."""
    match = _VERSION.search(model_id)
    if match is None:
        return ()
    family, major, minor = match.group(1), int(match.group(2)), int(match.group(3) or 0)
    version = (major, minor)
    if family == "haiku":
        return ()
    if version >= (5, 0) or (family == "opus" and version >= (4, 7)):
        return EFFORT_LEVELS
    if version >= (4, 6):
        return (*_BASIC, "max")
    return _BASIC if family == "opus" and version == (4, 5) else ()


def effort_betas(model_id: str) -> list[str]:
    """Beta headers a request with effort needs for ``model_id``."""
    match = _VERSION.search(model_id)
    is_opus_4_5 = match is not None and match.group(1) == "opus" and (match.group(2), match.group(3)) == ("4", "5")
    return [OPUS_4_5_BETA] if is_opus_4_5 else []
