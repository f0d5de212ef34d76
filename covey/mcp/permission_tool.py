"""``--permission-prompt-tool mcp__SERVER__TOOL``: an MCP tool answers the session's permission
prompts, as in Claude Code's print mode. Each prompt calls the tool with ``tool_name``, ``input``
and ``tool_use_id``; its text answer is JSON, ``{"behavior": "allow"}`` (``updatedInput`` is
not applied: covey runs the call as the model made it) or ``{"behavior": "deny", "message": ...}``.
Anything else, or a server that does not answer, denies the call and says why. The server is
one of the session's own (``--mcp-config``, settings, an approved ``.mcp.json``, the program's),
started for each prompt and stopped after it."""

from __future__ import annotations

import json
from typing import Any, Mapping

from covey.errors import UserError
from covey.mcp.config import McpServerConfig
from covey.mcp.tools import mcp_tool_name
from covey.permissions.askers import Answer
from covey.permissions.decisions import Deny, PermissionRequest


class McpPermissionTool:
    """An ``Asker`` that calls one MCP tool for each permission prompt."""

    def __init__(self, name: str, servers: Mapping[str, McpServerConfig], *, cwd: str,
                 env: Mapping[str, str] | None = None, relay: Any = None) -> None:
        candidates = [server for server in servers if name.startswith(mcp_tool_name(server, ""))]
        if not name.startswith("mcp__") or not candidates:
            known = ", ".join(sorted(servers)) or "none"
            raise UserError(f"--permission-prompt-tool {name}: no MCP server of this session serves it (a tool "
                            f"named mcp__SERVER__TOOL of one of: {known})")
        self.name, self.cwd, self.env, self.relay = name, cwd, env, relay
        self.servers = {server: servers[server] for server in candidates}

    async def __call__(self, request: PermissionRequest) -> Answer:
        from covey.mcp.client import McpConnection
        from covey.mcp.manager import wait_s

        for server, config in self.servers.items():
            connection = McpConnection(server, config, cwd=self.cwd, env=self.env, relay=self.relay).start()
            try:
                if not await connection.wait(wait_s(self.env)):
                    return self._deny(connection.describe_failure())
                tool = next((t.name for t in connection.tools if mcp_tool_name(server, t.name) == self.name), None)
                if tool is not None:
                    arguments = {"tool_name": request.tool_name, "input": request.input,
                                 "tool_use_id": request.tool_use_id}
                    return self._answer(await connection.call(tool, arguments))
            except Exception as exc:  # a prompt never raises into the agent loop: the call is denied
                return self._deny(f"{type(exc).__name__}: {exc}")
            finally:
                await connection.close()
        return self._deny(f"no tool {self.name} on server {', '.join(self.servers)}")

    def _answer(self, result: Any) -> Answer:
        text = "".join(getattr(block, "text", "") for block in getattr(result, "content", None) or [])
        try:
            answer = json.loads(text)
        except ValueError:
            answer = None
        if getattr(result, "isError", False) or not isinstance(answer, dict):
            return self._deny(f"it answered {text[:200]!r}, not {{\"behavior\": \"allow\" | \"deny\"}}")
        if answer.get("behavior") == "allow":
            return True
        if answer.get("behavior") == "deny":
            message = answer.get("message") if isinstance(answer.get("message"), str) else ""
            return Deny(message=message or f"Denied by {self.name}.", source="user",
                        reason=f"denied by the permission prompt tool {self.name}")
        return self._deny(f"it answered behavior {answer.get('behavior')!r}, not allow or deny")

    def _deny(self, why: str) -> Deny:
        return Deny(message=f"Permission denied: the permission prompt tool {self.name} did not allow the call ({why}).",
                    source="user", reason=f"the permission prompt tool {self.name} failed")
