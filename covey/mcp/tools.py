"""An MCP server's tool as a covey ``Tool``: ``mcp__<server>__<tool>``, the server's schema,
and its result (text, images, isError) as a ``ToolResult``.

A server is untrusted: its text is cut at ``MAX_RESULT_CHARS`` (Claude Code's
25,000-token cap on an MCP result) and an image over the Messages API's size
becomes a note, each saying what was dropped.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from covey.tools.base import Tool, ToolContext, ToolResult
from covey.tools.read_media import MAX_IMAGE_BYTES

if TYPE_CHECKING:  # the MCP SDK loads where a server is connected, not with every session
    from covey.mcp.client import McpConnection

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def mcp_tool_name(server: str, tool: str) -> str:
    """Claude Code's name: characters the Messages API refuses in a tool name become ``_``."""
    return f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"


class McpInput(BaseModel):
    """Whatever the model sends: the server validates its own arguments."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool):
    """One tool of one connected server (built per connection, so these are instance attributes)."""

    input_model = McpInput

    def __init__(self, connection: McpConnection, tool: Any) -> None:
        self.connection = connection
        self.remote_name = tool.name
        self.name = mcp_tool_name(connection.name, tool.name)
        self.description = tool.description or f"Tool {tool.name!r} of MCP server {connection.name!r}"
        self.input_schema = dict(tool.input_schema or {"type": "object", "properties": {}})
        hints = getattr(tool, "annotations", None)
        # What the server says of its tool informs (it may run beside the message's other calls),
        # never permits: a server can say anything, so its calls are asked about as any other's.
        self.read_only_hint = bool(getattr(hints, "read_only_hint", False))

    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    async def run(self, input: McpInput, ctx: ToolContext) -> ToolResult:
        try:
            result = await self.connection.call(self.remote_name, input.model_dump())
        except Exception as exc:  # a dead server or a transport error: the model reads why
            detail = self.connection.describe_failure() if self.connection.state != "connected" else str(exc)
            return ToolResult.error(f"{self.name} failed: {detail}")
        return as_tool_result(result)


def as_tool_result(result: Any) -> ToolResult:
    """The SDK's ``CallToolResult`` as covey's: text joined for ``content``; images kept as
    image blocks (``blocks``, after the text) so the model sees them."""
    blocks = [block for item in getattr(result, "content", None) or [] for block in _blocks(item)]
    structured = getattr(result, "structured_content", None)
    if not blocks and structured is not None:
        blocks = [{"type": "text", "text": json.dumps(structured)}]
    blocks = [_sized(block) for block in blocks]
    text = "\n".join(b["text"] for b in blocks if b["type"] == "text")
    if getattr(result, "is_error", False):
        return ToolResult.error(text or "the MCP tool reported an error").capped()
    images = [b for b in blocks if b["type"] == "image"]  # they follow the text (ToolResult.blocks)
    hint = "ask the tool for less (a filter, a page, a range)"
    return ToolResult(content=text or ("" if images else "(no content)"), blocks=images).capped(hint=hint)


def _sized(block: dict[str, Any]) -> dict[str, Any]:
    """An image the Messages API would refuse as a note instead (base64: 4 characters per 3 bytes)."""
    if block["type"] != "image" or len(block["source"]["data"]) * 3 // 4 <= MAX_IMAGE_BYTES:
        return block
    size = len(block["source"]["data"]) * 3 // 4
    return {"type": "text", "text": f"[image not shown: {size:,} bytes, over the {MAX_IMAGE_BYTES:,} an image may be]"}


def _blocks(item: Any) -> list[dict[str, Any]]:
    kind = getattr(item, "type", None)
    if kind == "text":
        return [{"type": "text", "text": item.text}]
    if kind == "image":
        return [{"type": "image", "source": {"type": "base64", "media_type": item.mime_type, "data": item.data}}]
    if kind == "resource":
        res = item.resource
        text = getattr(res, "text", None)
        return [{"type": "text", "text": text if text is not None else f"[resource {res.uri} ({res.mime_type or 'binary'})]"}]
    if kind == "resource_link":
        return [{"type": "text", "text": f"[resource link {item.uri}: {item.name}]"}]
    return [{"type": "text", "text": f"[{kind} content not shown]"}]
