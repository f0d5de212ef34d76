"""Deny and ask rules that match a tool's input parameter: ``Agent(model:opus)``,
``Agent(isolation:worktree)``, ``Bash(run_in_background:true)`` (Claude Code's "match by
input parameter").

The value matches the literal input the model sent (``*`` a wildcard, else exact); a
parameter the call leaves out, or one holding an object or a list, is never matched. A
tool's primary field (``command``, ``file_path``...) cannot be matched this way: a compound
command would slip past it, so such a rule is ignored, with a warning.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from covey.permissions.tool_traits import PRIMARY_FIELDS

_PARAM = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*", re.DOTALL)


def parameter_rule(tool: str, content: str | None) -> tuple[str, str] | None:
    """(parameter, value pattern) when ``content`` reads as ``param:value``."""
    match = _PARAM.fullmatch(content or "")
    if match is None or not match.group(2) or match.group(1) == PRIMARY_FIELDS.get(tool):
        return None
    return match.group(1), match.group(2)


def matches_parameter(tool: str, content: str | None, input: Mapping[str, Any]) -> bool:
    parsed = parameter_rule(tool, content)
    if parsed is None or parsed[0] not in input:
        return False
    value = input[parsed[0]]
    if isinstance(value, (dict, list)) or value is None:
        return False
    text = json.dumps(value) if isinstance(value, bool) else str(value)
    pattern = ".*".join(re.escape(piece) for piece in parsed[1].split("*"))
    return re.fullmatch(pattern, text, re.DOTALL) is not None


def primary_field_warning(tool: str, content: str | None) -> str | None:
    """Why a ``Bash(command:rm *)`` rule is ignored."""
    match = _PARAM.fullmatch(content or "")
    if match is None or match.group(1) != PRIMARY_FIELDS.get(tool):
        return None
    return (f"{tool}({content}) names {tool}'s primary field {match.group(1)!r}, which a parameter rule cannot "
            f"match (a compound command would slip past it); it is ignored: write {tool}({match.group(2)}) instead")
