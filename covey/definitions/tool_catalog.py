"""The built-in tools' classes, in the order an agent's catalog lists them, and the name sets
derived from their traits (``Tool.path_rules``, ``touches_files``...): a new tool sets its traits
on its class and is listed here once; nothing else names it."""

from __future__ import annotations

from typing import Callable, Iterable

from covey.definitions.skill_tool import SkillTool
from covey.tools.base import Tool
from covey.tools.bash import Bash
from covey.tools.edit import Edit
from covey.tools.glob import Glob
from covey.tools.grep import Grep
from covey.tools.notebook_edit import NotebookEdit
from covey.tools.plan_mode import ExitPlanMode
from covey.tools.read import Read
from covey.tools.shells import TaskOutput, TaskStop
from covey.tools.todo import TodoWrite
from covey.tools.web_fetch import WebFetch
from covey.tools.web_search import WebSearch
from covey.tools.write import Write

BUILTIN_TOOLS: tuple[type[Tool], ...] = (
    Read, Write, Edit, Glob, Grep, Bash, TodoWrite,
    NotebookEdit, WebFetch, WebSearch, TaskOutput, TaskStop, ExitPlanMode, SkillTool,
)
"""Every plain tool (the Agent and team tools are the agents' own, ``covey.agent.catalog``). Claude Code
lists ExitPlanMode in every mode; outside plan mode it only says so."""


def tool_names_where(trait: Callable[[type[Tool]], object], tools: Iterable[type[Tool]] = BUILTIN_TOOLS) -> frozenset[str]:
    """The names of the tools whose class has ``trait`` (``lambda t: t.touches_files``)."""
    return frozenset(tool.name for tool in tools if trait(tool))


def tool_names_in_order(trait: Callable[[type[Tool]], object], tools: Iterable[type[Tool]] = BUILTIN_TOOLS) -> list[str]:
    """As ``tool_names_where``, in the catalog's order (a definition's tool list keeps it)."""
    return [tool.name for tool in tools if trait(tool)]


def path_rule_tools(family: str) -> frozenset[str]:
    """The tools a ``Read(path)`` or ``Edit(path)`` rule covers (Claude Code's rule families)."""
    return tool_names_where(lambda tool: tool.path_rules == family)
