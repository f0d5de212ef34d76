"""The MCP servers of the agents running in one process: started with an agent, stopped at its cleanup (docs/mcp.md).

A session's configured servers are shared: one connection per (session, server) in
this process, memoized, counted by the agents using it, and stopped when the last
of them ends. A definition's inline servers get a connection of their own, stopped
when the agent ends. Agents are Ray actors, one process each, so "shared" means
shared by the agents of one process; across processes each has its own client
(docs/cluster.md#mcp-servers).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from covey.errors import UserError
from covey.mcp.client import McpConnection
from covey.mcp.config import McpServerConfig, parse_server
from covey.mcp.relay import McpRelay
from covey.mcp.resources import resource_tools
from covey.mcp.tools import McpTool

log = logging.getLogger(__name__)

DEFAULT_WAIT_S = 30.0
"""How long an agent waits for a server to connect (Claude Code's ``MCP_TIMEOUT``, in ms, changes it)."""


class McpServerUnavailable(UserError):
    """A server an agent definition requires did not connect in time."""


def wait_s(env: Mapping[str, str] | None) -> float:
    raw = (env if env is not None else os.environ).get("MCP_TIMEOUT")
    try:
        return float(raw) / 1000 if raw else DEFAULT_WAIT_S
    except ValueError:
        return DEFAULT_WAIT_S


@dataclass
class AgentMcp:
    """What one agent holds: its MCP tools, its inline connections, the shared ones it counts in."""

    tools: list[Any] = field(default_factory=list)
    """Its ``McpTool``s, and the resource tools when a server has resources."""
    inline: list[McpConnection] = field(default_factory=list)
    shared: list[tuple[str, str]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    """Each server that failed: its name, and why (with its stderr tail)."""


class McpManager:
    def __init__(self) -> None:
        self._shared: dict[tuple[str, str], McpConnection] = {}
        self._users: dict[tuple[str, str], int] = {}

    async def attach(self, session_id: str, servers: Mapping[str, McpServerConfig], wanted: list[Any], *,
                     cwd: str, env: Mapping[str, str] | None = None, timeout_s: float | None = None,
                     relay: McpRelay | None = None) -> AgentMcp:
        """Connect the session's servers (shared) and the definition's ``mcpServers`` (``wanted``);
        a server named by the definition that does not connect in ``timeout_s`` fails the agent."""
        timeout_s = wait_s(env) if timeout_s is None else timeout_s
        held = AgentMcp()
        try:
            required = self._required(wanted, servers)
            for name, config in servers.items():
                held.shared.append(key := (session_id, name))
                self._users[key] = self._users.get(key, 0) + 1
                if key not in self._shared:
                    self._shared[key] = McpConnection(name, config, cwd=cwd, env=env, relay=relay).start()
            for name, config in _inline(wanted, env, held.failures):
                held.inline.append(McpConnection(name, config, cwd=cwd, env=env).start())
            connections = [*(self._shared[k] for k in held.shared), *held.inline]
            for connection in connections:
                await self._settle(connection, held, timeout_s, required=connection.name in required
                                   and connection not in held.inline)
            held.tools.extend(resource_tools(connections))
        except BaseException:
            await self.detach(held)
            raise
        return held

    async def detach(self, held: AgentMcp) -> None:
        """Step 15: stop the agent's inline servers; a shared one stops with its last user here."""
        for connection in held.inline:
            await connection.close()
        for key in held.shared:
            self._users[key] -= 1
            if self._users[key] <= 0:
                self._users.pop(key)
                shared = self._shared.pop(key, None)
                if shared is not None:
                    await shared.close()
        held.inline.clear()
        held.shared.clear()

    async def required_problem(self, session_id: str, servers: Mapping[str, McpServerConfig], wanted: list[Any], *,
                               timeout_s: float) -> str | None:
        """What keeps a definition's required servers (``wanted``'s names) from this process's
        connections, after waiting up to ``timeout_s`` for pending ones; None when they connected,
        or when this process holds no connection to judge by (the child checks again)."""
        try:
            required = self._required(wanted, servers)
        except McpServerUnavailable as exc:
            return str(exc)
        for name in sorted(required):
            connection = self._shared.get((session_id, name))
            if connection is None or await connection.wait(timeout_s):
                continue
            if connection.state == "pending":
                return f"MCP server {name!r} did not connect within {timeout_s:g} s"
            return connection.describe_failure()
        return None

    def connection(self, held: AgentMcp, name: str) -> McpConnection | None:
        """The agent's connection to server ``name`` (its own inline one first), if it holds one."""
        shared = [self._shared[key] for key in held.shared if key in self._shared]
        return next((c for c in [*held.inline, *shared] if c.name == name), None)

    def statuses(self, session_id: str) -> list[dict[str, Any]]:
        return [c.status() for (sid, _), c in self._shared.items() if sid == session_id]

    @staticmethod
    def _required(wanted: list[Any], servers: Mapping[str, McpServerConfig]) -> set[str]:
        names = {item for item in wanted if isinstance(item, str)}
        if missing := sorted(names - set(servers)):
            raise McpServerUnavailable(f"the agent definition names MCP server {missing[0]!r}, which is not configured "
                                       f"(configured: {', '.join(sorted(servers)) or 'none'})")
        return names

    async def _settle(self, connection: McpConnection, held: AgentMcp, timeout_s: float, *, required: bool) -> None:
        if await connection.wait(timeout_s):
            held.tools.extend(McpTool(connection, tool) for tool in connection.tools)
            return
        if connection.state == "pending":
            connection.error = f"it did not connect within {timeout_s:g} s"
        problem = connection.describe_failure()
        if required:
            raise McpServerUnavailable(f"the agent definition requires MCP server {connection.name!r}: {problem}")
        held.failures.append((connection.name, problem))
        log.warning("%s; the agent goes on without its tools", problem)


def _inline(wanted: list[Any], env: Mapping[str, str] | None, failures: list[tuple[str, str]]) -> list[tuple[str, McpServerConfig]]:
    """A definition's inline servers (``- name: {command: ...}``), expanded against the run's
    environment; one that does not parse is reported in ``failures`` and skipped."""
    found = []
    for item in wanted:
        for name, body in (item.items() if isinstance(item, dict) else ()):
            try:
                found.append((name, parse_server(name, body, env if env is not None else os.environ,
                                                 source="the agent definition's mcpServers")))
            except UserError as exc:
                failures.append((name, str(exc)))
                log.warning("%s; MCP server not started", exc)
    return found


MANAGER = McpManager()
"""This process's manager: agents in one actor process share it."""
