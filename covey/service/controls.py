"""The SDK's control requests about the session rather than its turns: its context usage, file
rewinds, its MCP servers; and the answer to a request covey does not know, in Claude Code's shape.

A conversation (``covey.service.conversation``) answers the rest (``initialize``, ``interrupt``,
the mode and the model, ``stop_task``, ``end_session``)."""

from __future__ import annotations

import asyncio
from typing import Any

from covey.errors import CoveyError
from covey.session import Session

UNSUPPORTED = "unsupported_request"
"""Claude Code's ``error_code`` for a request subtype it does not know."""
CHECKPOINTING_ENV = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"
"""What claude-agent-sdk sets for ``enable_file_checkpointing=True``."""


class ControlRefused(CoveyError):
    """A control request answered with an error; ``code``: Claude Code's ``error_code``, if it has one."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message, code)
        self.message, self.code = message, code

    def __str__(self) -> str:
        return self.message


def unsupported(subtype: str | None) -> ControlRefused:
    """As Claude Code answers a subtype it does not know (``update_queued_message`` in print mode too)."""
    return ControlRefused(f"Unsupported control request subtype: {subtype}", UNSUPPORTED)


async def answer(subtype: str | None, request: dict[str, Any], session: Session) -> dict[str, Any]:
    """The answer to one of this module's requests; ``ControlRefused`` for any other."""
    match subtype:
        case "get_context_usage":
            from covey.service.context_usage import context_usage

            return await asyncio.to_thread(context_usage, session)
        case "rewind_files":
            raise ControlRefused(_no_rewind(session))
        case "mcp_reconnect":
            await reconnect(session, str(request.get("serverName") or ""))
            return {}
        case "mcp_toggle":
            name = str(request.get("serverName") or "")
            if not session.mcp.toggle(name, bool(request.get("enabled"))):
                raise ControlRefused(f"Server not found: {name}")
            return {}
    raise unsupported(subtype)


def _no_rewind(session: Session) -> str:
    if (session.env.get(CHECKPOINTING_ENV) or "").lower() not in ("1", "true"):
        return "File rewinding is not enabled."  # Claude Code's answer without enable_file_checkpointing
    return ("covey does not checkpoint files (enable_file_checkpointing): rewind_files cannot restore them; "
            "nothing was changed")


async def reconnect(session: Session, name: str) -> None:
    """``mcp_reconnect``: covey's agents connect their servers each time they start, so the next
    turn connects anew whatever this says; here the server is connected now, as a check, and a
    failure is the answer's error (Claude Code's: the connection's own error)."""
    if name in session.mcp.disabled:
        raise ControlRefused(f"MCP server {name} is disabled — enable it (mcp_toggle) before reconnecting")
    if name not in session.mcp.servers:
        raise ControlRefused(f"Server not found: {name}")
    from covey.mcp.listing import probe

    entry, = await probe({name: session.mcp.servers[name]}, cwd=str(session.cwd), env=session.env,
                         relay=session.options.on_mcp_message)
    if entry.get("status") != "connected":
        raise ControlRefused(str(entry.get("error") or f"{name} did not connect"))
