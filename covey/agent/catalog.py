"""Every tool a covey agent may be given, shaped by the session's options."""

from __future__ import annotations

from covey.definitions.tool_catalog import BUILTIN_TOOLS
from covey.subagents.agent_tool import AgentTool
from covey.subagents.team_tools import SendMessage, team_tools
from covey.tools.base import Tool
from covey.tools.options import ToolOptions


def tool_catalog(options: ToolOptions | None = None) -> list[Tool]:
    """The full, ordered tool list; an agent's pool is a filtered subset of it."""
    options = options or ToolOptions()
    tools: list[Tool] = [tool() for tool in BUILTIN_TOOLS]
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

