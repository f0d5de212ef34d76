"""Every tool a covey agent may be given, shaped by the session's options."""

from __future__ import annotations

from covey.tools import core_tools
from covey.agents.agent_tool import AgentTool
from covey.tools.base import Tool
from covey.tools.notebook_edit import NotebookEdit
from covey.tools.plan_mode import ExitPlanMode
from covey.tools.shells import TaskOutput, TaskStop
from covey.tools.web_fetch import WebFetch
from covey.tools.web_search import WebSearch
from covey.tools.options import ToolOptions
from covey.tools.skill import Skill
from covey.agents.team_tools import SendMessage, team_tools


def tool_catalog(options: ToolOptions | None = None) -> list[Tool]:
    """The full, ordered tool list; an agent's pool is a filtered subset of it."""
    options = options or ToolOptions()
    tools: list[Tool] = [*core_tools()]
    tools.extend(everyday_tools())
    tools.append(Skill())
    if options.teams:
        tools.extend(team_tools())
    elif options.coordinator:
        tools.append(SendMessage())  # the coordinator continues its workers without teams
    # In coordinator mode, and with forking on, every spawn is async: the schema has no run_in_background.
    background = not (options.background_disabled or options.coordinator)
    tools.append(AgentTool(background=background, teams=options.teams, remote=options.remote, fork=options.fork))
    return tools


def tool_names(options: ToolOptions | None = None) -> list[str]:
    return [tool.name for tool in tool_catalog(options)]


def everyday_tools() -> list[Tool]:
    """Notebooks, the web, background shells' output and stop, and leaving plan mode (Claude Code's
    ExitPlanMode is listed in every mode; outside plan mode it only says so)."""
    return [NotebookEdit(), WebFetch(), WebSearch(), TaskOutput(), TaskStop(), ExitPlanMode()]
