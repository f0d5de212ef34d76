"""Managed (policy) settings: the organisation's files, read above every other source.

Claude Code reads ``managed-settings.json`` and the ``*.json`` drop-ins of
``managed-settings.d/`` (in name order, hidden files skipped, a later file's value
replacing an earlier one's) from a system folder: ``/etc/claude-code`` on Linux,
``/Library/Application Support/ClaudeCode`` on macOS, ``C:\\Program Files\\ClaudeCode``
on Windows. The same folder's ``.claude/agents`` and ``.claude/skills`` hold managed
agents and skills.

Nothing in the user's environment moves that folder: the managed settings exist to bind the
user, so a variable the user sets must not swap in a folder the user writes. Tests point
:data:`MANAGED_DIR` elsewhere by assigning the module constant (tests/conftest.py; a
``covey`` subprocess through tests/managed_covey.py), which no environment can reach.

``strictPluginOnlyCustomization`` is honoured from managed settings only: ``true``
locks all four surfaces, a list locks those it names (``skills``, ``agents``,
``hooks``, ``mcp``); a locked surface loads only from plugins and managed sources.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

SURFACES = ("skills", "agents", "hooks", "mcp")
_DEFAULT_DIRS = {"darwin": "/Library/Application Support/ClaudeCode", "win32": r"C:\Program Files\ClaudeCode"}

MANAGED_DIR: Path = Path(_DEFAULT_DIRS.get(sys.platform, "/etc/claude-code"))
"""The platform's managed settings folder (tests assign another; nothing else does)."""


def managed_dir() -> Path:
    """The managed settings folder, read when it is needed (so a test's assignment holds)."""
    return MANAGED_DIR


def managed_files(directory: Path) -> list[Path]:
    """``managed-settings.json`` then its drop-ins, lowest precedence first."""
    files = [directory / "managed-settings.json"] if (directory / "managed-settings.json").is_file() else []
    drop_ins = directory / "managed-settings.d"
    if drop_ins.is_dir():
        files += sorted(p for p in drop_ins.glob("*.json") if p.is_file() and not p.name.startswith("."))
    return files


def locked_surfaces(value: Any) -> tuple[frozenset[str], str | None]:
    """The surfaces a ``strictPluginOnlyCustomization`` value locks, and a problem to report (or None)."""
    if value is None or value is False:
        return frozenset(), None
    if value is True:
        return frozenset(SURFACES), None
    if not isinstance(value, list):
        return frozenset(), f"expected true or a list of {', '.join(SURFACES)}, got {type(value).__name__}; ignored"
    unknown = [str(item) for item in value if item not in SURFACES]
    note = f"unknown surface(s) {', '.join(map(repr, unknown))} ignored (known: {', '.join(SURFACES)})" if unknown else None
    return frozenset(item for item in value if item in SURFACES), note
