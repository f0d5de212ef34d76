"""An SDK MCP server (``type: "sdk"``): a server that lives in the claude-agent-sdk program's own
process (``create_sdk_mcp_server``), reached over the SDK's control protocol (docs/mcp.md).

The transport is a pair of memory streams for the official ``ClientSession``: each JSON-RPC
message the session writes goes to ``relay`` (on an agent actor: up to the session's root,
which sends it to the program as an ``mcp_message`` control request, as permission prompts
travel), and the JSON-RPC response that comes back is what the session reads. Requests are
relayed concurrently (several tool calls of one turn); a notification's acknowledgement is
dropped. A relay that fails answers the request with a JSON-RPC error, so that one call
fails and the connection stays up.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable, Literal

import anyio
from pydantic import BaseModel, Field

from covey.events import Event
from covey.hooks.callback import HookCall, HookCallbackPrompt

McpRelay = Callable[[str, dict[str, Any]], Awaitable["dict[str, Any] | None"]]
"""``(server_name, json_rpc_message) -> json_rpc_response``: sends one message to the SDK program."""
INTERNAL_ERROR = -32603
QUEUED = 64


class McpCall(BaseModel):
    """One JSON-RPC message for SDK server ``server``: what an agent asks the root of its session
    (as a hook callback bubbles up), the answer being the server's JSON-RPC response."""

    server: str
    message: dict[str, Any] = Field(default_factory=dict)


class McpMessagePrompt(Event):
    """An ``McpCall`` on its way to the session (never printed: the session relays it)."""

    type: Literal["system"] = "system"
    subtype: Literal["covey_mcp_message"] = "covey_mcp_message"
    request_id: str
    server: str
    message: dict[str, Any] = Field(default_factory=dict)


def no_relay_reason(name: str) -> str:
    return (f"MCP server {name!r} is an SDK server (type 'sdk'): it runs in the claude-agent-sdk program "
            "that started this session, and this session has none (only a program connected over "
            "--input-format stream-json serves one)")


SDK_PROMPTS: dict[type, type[Event]] = {HookCall: HookCallbackPrompt, McpCall: McpMessagePrompt}
"""What an agent asks the claude-agent-sdk program rather than the person, and the event that
carries the question up to the session (``AgentRunner.ask``)."""


@asynccontextmanager
async def relay_transport(name: str, relay: McpRelay) -> AsyncIterator[tuple[Any, Any]]:
    """The ``(read, write)`` streams a ``ClientSession`` talks to server ``name`` through."""
    # The MCP SDK (with the server side it imports: starlette, uvicorn, OpenTelemetry) loads only
    # where a session has such a server: an agent actor without one saves ~0.6 s and its memory.
    from mcp import types
    from mcp.shared.message import SessionMessage

    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](QUEUED)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](QUEUED)

    async def one(message: dict[str, Any]) -> None:
        try:
            answer = await relay(name, message)
        except Exception as exc:  # the program or the way to it failed: this request fails alone
            answer = {"jsonrpc": "2.0", "id": message.get("id"),
                      "error": {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}}
        if "id" not in message or "method" not in message or answer is None:
            return  # a notification (or a response of ours): nothing comes back to read
        try:
            await to_session.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(answer)))
        except ValueError as exc:
            await to_session.send(exc)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return  # the session closed meanwhile

    async def pump(group: anyio.abc.TaskGroup) -> None:
        async with from_session:
            async for sent in from_session:
                group.start_soon(one, sent.message.model_dump(by_alias=True, mode="json", exclude_unset=True))

    async with anyio.create_task_group() as group:
        group.start_soon(pump, group)
        try:
            yield read, write
        finally:
            group.cancel_scope.cancel()
            await to_session.aclose()
