"""A child's model and tool set, recomputed from its definition (docs/definitions.md#your-own-definitions)."""

from __future__ import annotations

import os
from typing import Any, Mapping

from covey.common.tool_names import canonical_tool_name
from covey.definitions.definition import AgentDefinition
from covey.definitions.memory import MEMORY_TOOLS
from covey.definitions.tool_catalog import tool_names_where
from covey.model.aliases import DEFAULT_SUBAGENT_MODEL, resolve_model

INHERIT = "inherit"
SUBAGENT_MODEL_ENV = ("COVEY_SUBAGENT_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL")
"""Variables that set every sub-agent's model, the first set one winning."""

GLOBAL_DENIED = tool_names_where(lambda tool: tool.lead_only) | frozenset({"TeamCreate", "TeamDelete"})
"""Tools no sub-agent may have: creating and deleting teams is the lead's job; as in Claude Code,
waiting on or stopping background tasks and leaving plan mode are too (a child's own background
shells are readable with Read and stopped when it ends)."""

CUSTOM_AGENT_DENIED = GLOBAL_DENIED | frozenset()
"""The default deny set for custom (non built-in) agents. It equals the global set
today; it is kept separate so custom agents can be tightened without touching built-ins."""

ASYNC_ALLOWED = tool_names_where(lambda tool: tool.background) | frozenset({
    "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "Agent",
})
"""A background agent has no terminal, so only tools that need none are offered to it. The agents' own
tools (team, task board, Agent) are named here, and TeamCreate and TeamDelete above: their classes
import this module, so it cannot read their traits."""

def resolve_agent_model(
    call_model: str | None,
    definition: AgentDefinition,
    parent_model_id: str | None,
    *,
    aliases: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """The child's model id, in Claude Code's order: the sub-agent model variable
    (``COVEY_SUBAGENT_MODEL``, else ``CLAUDE_CODE_SUBAGENT_MODEL``) > the call's > the
    definition's > the parent's.

    A definition without ``model`` inherits, as ``inherit`` says: a haiku main agent
    spawns haiku children. One that names a model keeps it (Explore on haiku) unless
    the call or the variable overrides it. An unknown alias is a ``UserError`` naming
    it. ``env`` is the run's environment (None: this process's), where the variables
    and alias overrides such as ``ANTHROPIC_DEFAULT_HAIKU_MODEL`` are read.
    """
    chosen = subagent_model_override(env) or call_model or definition.model or INHERIT
    if chosen.strip().lower() == INHERIT:
        return parent_model_id or DEFAULT_SUBAGENT_MODEL
    return resolve_model(chosen, aliases, env=env)


def subagent_model_override(env: Mapping[str, str] | None) -> str | None:
    """The model every sub-agent runs on, if the run's environment sets one.

    covey's variable beats Claude Code's when both are set; ``inherit`` means
    no override (the usual order decides), as Claude Code documents it.
    """
    env = os.environ if env is None else env
    value = next((env[name].strip() for name in SUBAGENT_MODEL_ENV if (env.get(name) or "").strip()), None)
    return None if value is None or value.lower() == INHERIT else value


def child_effort(call_effort: Any, definition: AgentDefinition, parent_effort: Any) -> Any:
    """The child's reasoning effort: the call's, else its definition's, else its parent's."""
    return next((e for e in (call_effort, definition.effort, parent_effort) if e is not None), None)


def resolve_tools(
    definition: AgentDefinition,
    available: list[str],
    *,
    depth: int,
    max_depth: int,
    background: bool,
) -> list[str]:
    """The tool names a child of ``definition`` gets, in ``available``'s order.

    ``depth`` is the child's own depth: a child at ``max_depth`` may not spawn,
    so it does not get ``Agent``. MCP tools (``mcp__*``) pass every filter. An agent with
    ``memory`` also gets Read, Write and Edit, unless ``disallowedTools`` names them.
    """
    denied = _denied(definition, depth=depth, max_depth=max_depth)
    allowed = None if definition.tools == ["*"] else _names(definition.tools)
    if allowed is not None and definition.memory is not None:
        allowed |= MEMORY_TOOLS
    return [name for name in available if _is_mcp(name) or _keeps(name, denied, allowed, background)]


def _denied(definition: AgentDefinition, *, depth: int, max_depth: int) -> set[str]:
    denied = set(GLOBAL_DENIED if definition.source == "built-in" else CUSTOM_AGENT_DENIED)
    denied |= _names(definition.disallowed_tools)
    if depth >= max_depth:
        denied.add("Agent")
    return denied


def _keeps(name: str, denied: set[str], allowed: set[str] | None, background: bool) -> bool:
    if name in denied or (background and name not in ASYNC_ALLOWED):
        return False
    return allowed is None or name in allowed


def _names(tools: list[str]) -> set[str]:
    """Tool names with old aliases mapped; ``Agent(Explore)``-style specs count as their tool."""
    return {canonical_tool_name(base) for base in (tool.split("(", 1)[0].strip() for tool in tools)}


def _is_mcp(name: str) -> bool:
    return name.startswith("mcp__")
