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

The program that starts covey may add a tier of its own (``--managed-settings``, the SDK's
``managedSettings``), as Claude Code's parent tier: only its restrictive keys are kept
(``restrictive_only``), and where the machine has managed files they apply alone unless one
says ``parentSettingsBehavior: "merge"``.
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


PARENT = "managed settings from the program (--managed-settings)"
"""Where the program's tier is said to come from, in warnings and rule sources."""


def restrictive_only(parent: dict[str, Any], *, admin_rules_only: bool = False) -> dict[str, Any]:
    """The keys of the program's managed settings that only restrict, as Claude Code keeps them
    (the rest, ``model``, ``env``, hooks, ``defaultMode``..., are dropped): the managed-only locks,
    deny and ask rules (not a ``!`` exception), ``disableBypassPermissionsMode: "disable"``,
    ``blockReadsOutsideWorkingDirectories: true``, and allow rules unless the machine's managed
    settings let only their own rules apply."""
    kept: dict[str, Any] = {}
    hooks_off = parent.get("disableAllHooks") not in (None, False, "false")
    if parent.get("allowManagedHooksOnly") is True or hooks_off:
        kept["allowManagedHooksOnly"] = True
    if parent.get("allowManagedPermissionRulesOnly") is True:
        kept["allowManagedPermissionRulesOnly"] = True
    strict = parent.get("strictPluginOnlyCustomization")
    if strict is True or (isinstance(strict, list) and strict):
        kept["strictPluginOnlyCustomization"] = strict
    if permissions := _restrictive_permissions(parent.get("permissions"), admin_rules_only):
        kept["permissions"] = permissions
    return kept


def _restrictive_permissions(given: Any, admin_rules_only: bool) -> dict[str, Any]:
    if not isinstance(given, dict):
        return {}
    kept: dict[str, Any] = {}
    for behavior in ("deny", "ask"):
        if isinstance(given.get(behavior), list):
            kept[behavior] = [rule for rule in given[behavior] if not (isinstance(rule, str) and rule.startswith("!"))]
    if isinstance(given.get("allow"), list) and not admin_rules_only:
        kept["allow"] = given["allow"]
    if given.get("disableBypassPermissionsMode") == "disable":
        kept["disableBypassPermissionsMode"] = "disable"
    if given.get("blockReadsOutsideWorkingDirectories") is True:
        kept["blockReadsOutsideWorkingDirectories"] = True
    return kept


def parent_applies(admin: list[tuple[Any, Any]]) -> bool:
    """Whether the program's tier applies beside the machine's managed files (``(path, Wire)``,
    lowest first): always without them; with them, if the last that sets it says ``merge``."""
    said = [wire.parent_behavior for _, wire in admin if wire.parent_behavior is not None]
    return not admin or (bool(said) and said[-1] == "merge")
