"""One connection to one MCP server, through the official SDK (``mcp``): no protocol code here.

The SDK's transports and ``ClientSession`` are context managers whose task groups must
be entered and left by one task, so each connection owns a task that opens them,
lists the server's tools, reports ready, and holds them open until ``close``. Tool
calls from any task of the same event loop go through the open session.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from contextlib import AsyncExitStack
from typing import Any, Mapping

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED
from mcp.shared._httpx_utils import create_mcp_http_client  # the SDK's own client factory (its session_group uses it)

from covey.common.subprocess_env import scrubbed
from covey.mcp.config import McpServerConfig
from covey.mcp.relay import McpRelay, no_relay_reason, relay_transport

STDERR_TAIL_CHARS = 2000


class McpConnection:
    """A server's state (``pending`` → ``connected`` | ``failed``; ``closed`` at the end), its tools,
    and the calls to it."""

    def __init__(self, name: str, config: McpServerConfig, *, cwd: str | None = None,
                 env: Mapping[str, str] | None = None, relay: McpRelay | None = None) -> None:
        self.name = name
        self.relay = relay
        """How an SDK server's messages reach the claude-agent-sdk program (None: no program)."""
        self.config = config
        self.cwd = config.cwd or cwd
        self.env = dict(env if env is not None else os.environ)
        self.state = "pending"
        self.error: str | None = None
        self.tools: list[Any] = []
        """The server's tools (the SDK's ``Tool``: name, description, input schema)."""
        self.server_info: Any = None
        self.has_resources = False
        """The server offers resources (the resource tools list and read them)."""
        self._session: ClientSession | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        """The stdio server's stderr (a real file: the SDK hands it to the process as is)."""

    def start(self) -> "McpConnection":
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"mcp-{self.name}")
        return self

    async def wait(self, timeout_s: float | None = None) -> bool:
        """Whether it connected within ``timeout_s`` (False: still pending, or failed)."""
        try:
            await asyncio.wait_for(self._ready.wait(), timeout_s)
        except asyncio.TimeoutError:
            return False
        return self.state == "connected"

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The SDK's ``CallToolResult``; a dead or closed server raises ``McpServerDown``."""
        if self._session is None or self.state != "connected":
            raise McpServerDown(self.describe_failure())
        try:
            return await self._session.call_tool(tool, arguments)
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED:  # the server died: this and later calls say so
                self._fail(exc)
                raise McpServerDown(self.describe_failure()) from exc
            raise

    async def list_resources(self) -> list[Any]:
        if self._session is None or self.state != "connected":
            raise McpServerDown(self.describe_failure())
        return list((await self._session.list_resources()).resources)

    async def read_resource(self, uri: str) -> Any:
        if self._session is None or self.state != "connected":
            raise McpServerDown(self.describe_failure())
        return await self._session.read_resource(uri)

    async def close(self) -> None:
        """Stop the server (the SDK closes stdin, then terminates its process tree). Idempotent."""
        self._stop.set()
        if self._task is not None:
            if self.state == "pending":  # still starting: nothing waits on the stop event yet
                self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._errlog.close()

    def describe_failure(self) -> str:
        what = self.error or f"it is {self.state}"
        tail = self.stderr_tail()
        return f"MCP server {self.name!r} is not available: {what}" + (f"\nIts stderr ended with:\n{tail}" if tail else "")

    def stderr_tail(self) -> str:
        if self._errlog.closed:
            return ""
        self._errlog.flush()
        self._errlog.seek(0)
        return self._errlog.read()[-STDERR_TAIL_CHARS:].strip()

    def status(self) -> dict[str, Any]:
        """Claude Code's ``mcp_status`` / ``system/init`` entry for this server."""
        entry: dict[str, Any] = {"name": self.name, "status": self.state}
        if self.error:
            entry["error"] = self.error
        if self.server_info is not None:
            entry["serverInfo"] = {"name": self.server_info.name, "version": self.server_info.version}
        return entry

    async def _run(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(await self._transport(stack))
                session = await stack.enter_async_context(ClientSession(read, write))
                init = await session.initialize()
                self.server_info = getattr(init, "server_info", None)
                self.has_resources = bool(getattr(getattr(init, "capabilities", None), "resources", None))
                self.tools = await _all_tools(session)
                self._session, self.state = session, "connected"
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:  # a server that cannot start, or dies: reported, never raised
            self._fail(exc)
        finally:
            self._session = None
            if self.state != "failed":
                self.state = "closed" if self._stop.is_set() else "failed"
                self.error = self.error or (None if self._stop.is_set() else "the connection ended")
            self._ready.set()

    async def _transport(self, stack: AsyncExitStack) -> Any:
        if self.config.type == "sdk":
            if self.relay is None:
                raise McpServerDown(no_relay_reason(self.name))
            return relay_transport(self.name, self.relay)
        if self.config.type == "stdio":
            params = StdioServerParameters(command=self.config.command or "", args=list(self.config.args),
                                           env=scrubbed(self.env, own=self.config.env), cwd=self.cwd)
            return stdio_client(params, errlog=self._errlog)
        if self.config.type == "sse":
            raise McpServerDown(f"MCP server {self.name!r}: covey does not run the deprecated SSE transport; use type 'http'")
        client = await stack.enter_async_context(create_mcp_http_client(headers=dict(self.config.headers) or None))
        return streamable_http_client(self.config.url or "", http_client=client)

    def _fail(self, exc: BaseException) -> None:
        self.state, self.error = "failed", _reason(exc)


async def _all_tools(session: ClientSession) -> list[Any]:
    tools, cursor = [], None
    while True:
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = getattr(page, "next_cursor", None)
        if not cursor:
            return tools


def _reason(exc: BaseException) -> str:
    """The innermost cause, not the task groups' wrapping."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


class McpServerDown(Exception):
    """A call to a server that failed, died or was closed."""
