"""MCP servers for covey's agents, through the official ``mcp`` SDK (docs/mcp.md).

This module stays light: the SDK (about a second to import) loads only in a process
whose agents have MCP servers.
"""

from __future__ import annotations

from typing import Any


async def attach_servers(spec: Any, relay: Any = None) -> Any:
    """Step 11 for ``spec``: its MCP connections and tools (an ``AgentMcp``), or None without servers.
    ``relay``: how SDK servers' messages reach the claude-agent-sdk program (None: no program)."""
    if not (spec.settings.mcp_servers or spec.definition.mcp_servers):
        return None
    from covey.mcp.manager import MANAGER

    return await MANAGER.attach(spec.session_id, spec.settings.mcp_servers, spec.definition.mcp_servers,
                                cwd=spec.cwd, env=spec.settings.env, relay=relay)


async def detach_servers(held: Any) -> None:
    """Step 15: stop what ``attach_servers`` started for this agent (None: nothing)."""
    if held is not None:
        from covey.mcp.manager import MANAGER

        await MANAGER.detach(held)


async def required_servers_problem(parent: Any, definition: Any) -> str | None:
    """Routing's check (before a child exists) of the servers ``definition`` names: each configured,
    and connected in the parent's process within the wait (``MCP_TIMEOUT``); what is wrong, or None."""
    wanted = [item for item in (definition.mcp_servers or []) if isinstance(item, str)]
    if not wanted:
        return None
    from covey.mcp.manager import MANAGER, wait_s

    return await MANAGER.required_problem(parent.session_id, parent.settings.mcp_servers, wanted,
                                          timeout_s=wait_s(parent.settings.env))


def hook_caller(held: Any) -> Any:
    """``(server, tool, arguments) -> result`` over the agent's connections, for ``mcp_tool`` hooks
    (None without servers: such a hook then fails, not connected)."""
    if held is None:
        return None
    from covey.mcp.manager import MANAGER

    async def call(server: str, tool: str, arguments: dict[str, Any]) -> Any:
        connection = MANAGER.connection(held, server)
        if connection is None:
            raise LookupError(f"MCP server {server!r} is not connected to this agent")
        return await connection.call(tool, arguments)

    return call
