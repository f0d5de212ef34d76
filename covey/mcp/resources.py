"""Claude Code's two resource tools, offered when one of the agent's servers has resources:
``ListMcpResourcesTool{server?}`` and ``ReadMcpResourceTool{server, uri}``."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from covey.mcp.client import McpConnection
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult


class ListInput(ToolInput):
    server: str | None = Field(default=None, description="Only this server's resources (default: every server's)")


class ReadResourceInput(ToolInput):
    server: str = Field(description="The MCP server that has the resource")
    uri: str = Field(description="The resource's URI, as ListMcpResourcesTool gives it")


class _ResourceTool(Tool):
    read_only = True

    def __init__(self, connections: list[McpConnection]) -> None:
        self.connections = {c.name: c for c in connections}

    def _server(self, name: str) -> McpConnection | ToolResult:
        if name not in self.connections:
            known = ", ".join(sorted(self.connections)) or "none"
            return ToolResult.error(f"No MCP server {name!r} with resources. Servers with resources: {known}.")
        return self.connections[name]


class ListMcpResources(_ResourceTool):
    name = "ListMcpResourcesTool"
    description = "List the resources (files, records, documents) that the connected MCP servers offer."
    input_model = ListInput

    async def run(self, input: ListInput, ctx: ToolContext) -> ToolResult:
        servers = list(self.connections.values())
        if input.server:
            found = self._server(input.server)
            if isinstance(found, ToolResult):
                return found
            servers = [found]
        listed: list[dict[str, Any]] = []
        for server in servers:
            try:
                resources = await server.list_resources()
            except Exception as exc:
                return ToolResult.error(f"{server.name}: {exc}")
            listed.extend({"uri": str(r.uri), "name": r.name, "mimeType": r.mime_type, "description": r.description,
                           "server": server.name} for r in resources)
        return ToolResult(content=json.dumps(listed) if listed else "No resources found.")


class ReadMcpResource(_ResourceTool):
    name = "ReadMcpResourceTool"
    description = "Read one resource of an MCP server by its server name and URI."
    input_model = ReadResourceInput

    async def run(self, input: ReadResourceInput, ctx: ToolContext) -> ToolResult:
        server = self._server(input.server)
        if isinstance(server, ToolResult):
            return server
        try:
            result = await server.read_resource(input.uri)
        except Exception as exc:
            return ToolResult.error(f"{input.server}: cannot read {input.uri!r}: {exc}")
        contents = [{"uri": str(c.uri), "mimeType": c.mime_type,
                     **({"text": c.text} if getattr(c, "text", None) is not None else {"blob": "(binary, not shown)"})}
                    for c in result.contents]
        return ToolResult(content=json.dumps({"contents": contents}))


def resource_tools(connections: list[McpConnection]) -> list[Tool]:
    """Both tools when a connected server has resources, else none (as Claude Code)."""
    with_resources = [c for c in connections if c.state == "connected" and c.has_resources]
    return [ListMcpResources(with_resources), ReadMcpResource(with_resources)] if with_resources else []
