"""SDK MCP servers (``type: "sdk"``): the official client session over a relay of JSON-RPC
messages, as covey reaches a claude-agent-sdk program's in-process server. No Ray, no program:
the relay here answers as the SDK's server bridge does."""

from __future__ import annotations

import asyncio
from typing import Any

from covey.mcp.client import McpConnection
from covey.mcp.config import McpServerConfig
from covey.mcp.tools import McpTool
from covey.tools.base import ToolContext

SDK = McpServerConfig(type="sdk")


class FakeProgram:
    """Answers JSON-RPC as an in-process server would; records what it was sent."""

    def __init__(self, fail_calls: bool = False) -> None:
        self.seen: list[str] = []
        self.fail_calls = fail_calls

    async def __call__(self, server: str, message: dict[str, Any]) -> dict[str, Any] | None:
        method = message.get("method", "")
        self.seen.append(f"{server}:{method}")
        if "id" not in message:
            return {"jsonrpc": "2.0", "result": {}}  # the SDK acknowledges a notification so
        result: dict[str, Any]
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": server, "version": "1.0.0"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "add", "description": "Add", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call" and self.fail_calls:
            raise ConnectionError("the program went away")
        elif method == "tools/call":
            args = message["params"]["arguments"]
            result = {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}
        else:
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": method}}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}


async def _connected(relay: Any) -> McpConnection:
    connection = McpConnection("calc", SDK, relay=relay).start()
    await connection.wait(10)
    return connection


async def test_an_sdk_server_connects_lists_and_calls_through_the_relay(tmp_path) -> None:
    program = FakeProgram()
    connection = await _connected(program)
    try:
        assert connection.state == "connected" and [t.name for t in connection.tools] == ["add"]
        tool = McpTool(connection, connection.tools[0])
        ctx = ToolContext(agent_id="a", cwd=tmp_path)
        results = await asyncio.gather(*(tool.run(tool.input_model.model_validate({"a": n, "b": 1}), ctx)
                                         for n in range(3)))  # concurrent calls, each answered
        assert sorted(r.content for r in results) == ["sum=1", "sum=2", "sum=3"]
        assert tool.name == "mcp__calc__add" and "calc:initialize" in program.seen
    finally:
        await connection.close()


async def test_a_relay_that_fails_fails_that_call_and_the_connection_stays(tmp_path) -> None:
    connection = await _connected(FakeProgram(fail_calls=True))
    try:
        tool = McpTool(connection, connection.tools[0])
        result = await tool.run(tool.input_model.model_validate({"a": 1, "b": 1}), ToolContext(agent_id="a", cwd=tmp_path))
        assert result.is_error and "the program went away" in result.content
        assert connection.state == "connected"
    finally:
        await connection.close()


async def test_without_a_program_an_sdk_server_fails_saying_why() -> None:
    connection = await _connected(None)
    try:
        assert connection.state == "failed" and "claude-agent-sdk program" in connection.describe_failure()
    finally:
        await connection.close()
