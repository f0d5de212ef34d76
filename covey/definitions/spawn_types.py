"""Which agent types an agent may launch: Claude Code's ``Agent(Explore, Plan)`` in a definition's
``tools`` (docs/definitions.md#which-types-an-agent-may-launch).

The rule is read from the definition the agent runs under, which travels in its ``AgentSpec``
to the actor where its Agent tool runs; a fork runs under a copy that keeps its parent's list.
"""

from __future__ import annotations

from typing import Iterable

from covey.common.tool_names import canonical_tool_name
from covey.definitions.definition import AgentDefinition


def split_tools(text: str) -> list[str]:
    """A frontmatter tool list written as one string, split at the commas outside parentheses:
    ``Read, Agent(Explore, Plan)`` is ``["Read", "Agent(Explore, Plan)"]``."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth <= 0:
            parts.append(current)
            current, depth = "", 0
        else:
            current += char
    parts.append(current)
    return [part.strip() for part in parts if part.strip()]


def spawnable_types(tools: Iterable[str]) -> list[str] | None:
    """The agent types a ``tools`` list lets its agent launch, in order; None: any type.

    ``Agent(A, B)`` (or the older ``Task(A, B)``) names them; several such entries add up. A bare
    ``Agent``, an empty ``Agent()``, ``*``, or no Agent entry at all limits nothing (without
    ``Agent`` the agent has no Agent tool to limit)."""
    named: list[str] = []
    limited = False
    for entry in tools:
        tool, _, rest = entry.partition("(")
        if tool.strip() == "*":
            return None
        if canonical_tool_name(tool.strip()) != "Agent":
            continue
        types = [t.strip() for t in rest.rstrip().removesuffix(")").split(",") if t.strip()]
        if not types:
            return None
        limited = True
        named.extend(t for t in types if t not in named)
    return named if limited else None


def type_refusal(definition: AgentDefinition | None, agent_type: str, *, named: bool) -> str | None:
    """Why an agent running under ``definition`` may not launch ``agent_type``, as a tool result
    the model can act on; None when it may. ``named``: the call gave ``subagent_type`` (else
    ``agent_type`` is the default one)."""
    allowed = spawnable_types(definition.tools) if definition is not None else None
    if allowed is None or agent_type in allowed:
        return None
    assert definition is not None
    which = f"agent type {agent_type!r}" if named else f"an agent without subagent_type (it would be {agent_type!r})"
    choices = ", ".join(repr(name) for name in allowed)
    return (f"You may not launch {which}: your definition ({definition.name!r}) limits the Agent tool to "
            f"{choices} (its tools say Agent({', '.join(allowed)})). Call Agent again with subagent_type "
            f"set to one of {choices}, or do the work yourself.")


def listed(definitions: dict[str, AgentDefinition], tools: Iterable[str]) -> list[AgentDefinition]:
    """The definitions an agent with ``tools`` is shown in its agent list: the types it may launch."""
    allowed = spawnable_types(tools)
    return [d for name, d in definitions.items() if allowed is None or name in allowed]
