"""Running one ``mcp_tool`` hook: a tool of an MCP server the agent is already connected to, called
with the hook's ``input`` (``${path}`` strings filled from the event's payload); the tool's text is
read as a command hook's stdout (a JSON decision, or plain text). A server that is not connected,
a tool error or no answer within ``timeout`` is a non-blocking error, as in Claude Code."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, Awaitable, Callable

from covey.hooks.command import HookAnswer, read_answer
from covey.hooks.config import McpToolHook

McpCall = Callable[[str, str, dict[str, Any]], Awaitable[Any]]
"""``(server, tool, arguments) -> the SDK's CallToolResult``: the agent's connection to a server."""

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\}")


async def run_mcp_tool(hook: McpToolHook, payload: dict[str, Any], call: McpCall | None, *, timeout_s: float) -> HookAnswer:
    if call is None:
        return HookAnswer(hook.command, error=f"MCP server {hook.server!r} is not connected to this agent")
    arguments = fill(hook.input, payload)
    try:
        result = await asyncio.wait_for(call(hook.server, hook.tool, arguments), timeout_s)
    except asyncio.TimeoutError:
        return HookAnswer(hook.command, error=f"timed out after {timeout_s:g}s")
    except Exception as exc:  # the server is gone or refused the call: the hook failed, the run goes on
        return HookAnswer(hook.command, error=str(exc) or type(exc).__name__)
    text = "\n".join(getattr(item, "text", "") for item in getattr(result, "content", None) or [] if getattr(item, "text", None))
    if getattr(result, "isError", False):
        return HookAnswer(hook.command, error=f"the tool reported an error: {text or 'no details'}")
    return read_answer(hook.command, 0, text, "")


def fill(value: Any, payload: dict[str, Any]) -> Any:
    """``value`` with each ``${path}`` replaced from ``payload`` (``tool_input.file_path``): a string
    that is one placeholder becomes the value itself, one inside text its JSON (strings as they are);
    a path the payload lacks becomes empty."""
    if isinstance(value, dict):
        return {key: fill(item, payload) for key, item in value.items()}
    if isinstance(value, list):
        return [fill(item, payload) for item in value]
    if not isinstance(value, str):
        return value
    if whole := _PLACEHOLDER.fullmatch(value):
        found = _lookup(payload, whole.group(1))
        return "" if found is None else found
    return _PLACEHOLDER.sub(lambda m: _text(_lookup(payload, m.group(1))), value)


def _lookup(payload: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(payload, dict) or part not in payload:
            return None
        payload = payload[part]
    return payload


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)
