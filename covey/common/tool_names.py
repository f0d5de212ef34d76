"""Tool names Claude Code renamed: the map is written here once.

``Task`` is Claude Code's older name for ``Agent``; tool calls, permission
rules, hook matchers and definitions' tool lists written for it still work.
"""

from __future__ import annotations

LEGACY_NAMES: dict[str, str] = {"Task": "Agent", "KillShell": "TaskStop"}
"""Old name -> current name."""


def canonical_tool_name(name: str) -> str:
    """``name`` with a legacy alias replaced (``Task`` -> ``Agent``)."""
    return LEGACY_NAMES.get(name, name)


def names_of(tool_name: str) -> tuple[str, ...]:
    """Every name ``tool_name`` answers to: itself and its legacy names (a hook matcher
    written for ``Task`` must keep firing for ``Agent``)."""
    return (tool_name, *(old for old, new in LEGACY_NAMES.items() if new == tool_name))
