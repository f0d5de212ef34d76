"""Every tool a covey agent may be given, shaped by the session's options."""

from __future__ import annotations

from typing import Any

from covey.tools import core_tools
from covey.tools.agent import AgentTool
from covey.tools.base import Tool
from covey.tools.skill import Skill
from covey.tools.team_tools import team_tools


def tool_catalog(options: dict[str, Any] | None = None) -> list[Tool]:
    """The full, ordered tool list; an agent's pool is a filtered subset of it."""
    options = options or {}
    tools: list[Tool] = [*core_tools()]
    tools.append(Skill())
    if options.get("teams"):
        tools.extend(team_tools())
    tools.append(AgentTool(
        background=not options.get("background_disabled", False),
        teams=options.get("teams", False),
        remote=options.get("remote", False),
    ))
    return tools


def tool_names(options: dict[str, Any] | None = None) -> list[str]:
    return [tool.name for tool in tool_catalog(options)]
