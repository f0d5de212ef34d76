"""What the permission checks know of a tool by its name: the rule family its path falls under,
its primary input field, whether its rules' content is a file pattern.

The built-in tools declare these as traits of their classes (``Tool.path_rules``,
``Tool.primary_field``, ``covey/tools/base.py``). Permissions sit below the tools in the layers
(docs/architecture.md) and also judge rules naming tools that are not loaded (a settings file's
``Read(...)`` at start-up), so the names are written here once, for every tool, and
``tests/tools/test_traits.py`` holds this table equal to the classes' traits. Every other set is
derived from it.
"""

from __future__ import annotations

from typing import Literal

PathRules = Literal["Read", "Edit"]

PATH_RULES: dict[str, PathRules] = {
    "Read": "Read", "Glob": "Read", "Grep": "Read",
    "Edit": "Edit", "Write": "Edit", "NotebookEdit": "Edit",
}
"""Tool -> the family whose ``Read(path)`` / ``Edit(path)`` rules cover its path (``Tool.path_rules``)."""

PRIMARY_FIELDS: dict[str, str] = {
    "Bash": "command", "Read": "file_path", "Edit": "file_path", "Write": "file_path",
    "Grep": "path", "Glob": "path", "NotebookEdit": "notebook_path", "WebFetch": "url",
}
"""Tool -> the input field a rule's parentheses match (``Tool.primary_field``)."""

ASKED_IN_PLAN_MODE = frozenset({"ExitPlanMode", "WebFetch", "WebSearch"})
"""Tools plan mode asks about instead of refusing (``Tool.asked_in_plan_mode``)."""

READ_TOOLS = frozenset(name for name, family in PATH_RULES.items() if family == "Read")
EDIT_TOOLS = frozenset(name for name, family in PATH_RULES.items() if family == "Edit")

# Claude Code's quirks, by names it knows: NotebookRead and MultiEdit have no class in covey,
# a `:*` in a Grep(...) rule is not refused, and only Read(path) / Edit(path) / Grep(path) rules
# are consulted in file checks (a Write(path) or Glob(path) rule loads but never matches).
FILE_PATTERN_TOOLS = (READ_TOOLS | EDIT_TOOLS | {"NotebookRead"}) - {"Grep"}
"""Tools whose rule content is a file pattern: a Bash-style ``:*`` in it is an invalid rule."""
UNCONSULTED_PATH_TOOLS: dict[str, PathRules] = {
    **{name: "Edit" for name in sorted(EDIT_TOOLS - {"Edit"})}, "MultiEdit": "Edit", "Glob": "Read",
}
"""Tools whose ``Tool(path)`` rules file-permission checks never read -> the rule to write instead."""
