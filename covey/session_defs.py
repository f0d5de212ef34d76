"""What a session offers its agents: definitions (built-ins, files, flags, API objects) and skills."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from covey.agents.definition import AgentDefinition


def session_definitions(cwd: Path, extra: Any) -> tuple[dict[str, AgentDefinition], list[Any]]:
    """(active definitions by name, load errors) for a session in ``cwd``."""
    from covey.agents.loader import load_definitions

    objects = [d for d in extra if isinstance(d, AgentDefinition)] if isinstance(extra, list) else []
    flags = extra if isinstance(extra, (str, dict)) else None
    result = load_definitions(cwd, flag_agents=flags, extra=objects)
    return result.definitions, result.errors


def session_skills(cwd: Path) -> tuple[dict[str, Any], list[Any]]:
    """(skills by name, load errors) for a session in ``cwd``."""
    from covey.skills import discover_skills

    scan = discover_skills(cwd)
    return scan.skills, scan.errors
