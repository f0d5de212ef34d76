"""What comes up from the main agent's run for the driver to answer: a permission prompt for
the session's asker, an SDK client's hook callback; and the session's spend on its result."""

from __future__ import annotations

import logging
from typing import Any, Callable

from covey.errors import AgentUnavailable
from covey.events import PermissionPrompt, ResultEvent
from covey.hooks.callback import HookCallbackPrompt
from covey.mcp.relay import McpMessagePrompt
from covey.permissions.decisions import PermissionRequest
from covey.registry.handle import RegistryHandle
from covey.session.watch import SessionBroken

log = logging.getLogger("covey.session")


async def ask(asker: Any, prompt: PermissionPrompt, main_agent_id: str) -> Any:
    """The session's asker's answer; no asker: denied."""
    if asker is None:
        return False
    request = PermissionRequest(
        tool_name=prompt.tool_name, subject=prompt.subject, input=prompt.input, message=prompt.message,
        reason=prompt.reason or "asked by an agent", suggested_rule="", tool_use_id=prompt.tool_use_id,
        # The main agent's own prompt names no agent (Claude Code's can_use_tool does the same).
        agent_id=None if prompt.agent_id == main_agent_id else prompt.agent_id,
    )
    return await asker(request)


async def hook_callback(on_hook_callback: Callable[..., Any] | None, prompt: HookCallbackPrompt) -> Any:
    """The SDK client's answer to one of its hooks; None (the hook failed) if it cannot answer."""
    if on_hook_callback is None:
        return None
    try:
        return await on_hook_callback(prompt.callback_id, prompt.input, prompt.tool_use_id)
    except Exception as exc:  # the hook failed; the agent's run goes on, as after a failing command hook
        log.warning("the SDK's hook callback %s failed: %s", prompt.callback_id, exc)
        return None


async def mcp_message(on_mcp_message: Callable[..., Any] | None, prompt: McpMessagePrompt) -> Any:
    """The SDK program's answer to one MCP message; a JSON-RPC error if it cannot answer."""
    if on_mcp_message is None:
        return _rpc_error(prompt, f"no claude-agent-sdk program serves the SDK MCP server {prompt.server!r}")
    try:
        return await on_mcp_message(prompt.server, prompt.message)
    except Exception as exc:  # the program failed or left: that one call fails, the agent goes on
        return _rpc_error(prompt, f"the SDK MCP server {prompt.server!r} did not answer: {exc}")


def _rpc_error(prompt: McpMessagePrompt, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": prompt.message.get("id"), "error": {"code": -32603, "message": text}}


async def with_session_spend(registry: RegistryHandle, result: ResultEvent,
                             origin: dict[str, Any] | None = None) -> ResultEvent:
    """The main agent's result as Claude Code's: ``total_cost_usd`` and ``modelUsage`` count
    every agent's requests (sub-agents of any kind, killed and failed ones too), ``usage`` the
    main agent's own. The registry has heard of every main-agent turn before its result comes
    (``Progress``); a sub-agent's, once it has reported."""
    try:
        cost_usd, model_usage = await registry.session_usage()
    except AgentUnavailable as exc:  # the registry died before the watch saw it: the same end
        raise SessionBroken(f"covey's registry actor died ({exc})") from None
    return result.model_copy(update={"total_cost_usd": round(cost_usd, 6), "modelUsage": model_usage,
                                     "origin": origin})
