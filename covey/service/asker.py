"""The service's requests to a served run's client: a permission prompt becomes a ``can_use_tool``
control request, whose ``control_response`` is the person's answer; a claude-agent-sdk hook
becomes a ``hook_callback`` request.

The shapes are claude-agent-sdk's: ``permission_suggestions`` and ``updatedPermissions``
hold Claude Code's ``addRules`` updates; a ``deny`` with an empty ``message`` is a
plain "no" (the policy words it, as for a person at an in-process terminal).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Awaitable, Callable, Mapping

from covey.client import ports as protocol
from covey.permissions.askers import Answer
from covey.permissions.decisions import Allow, Deny, PermissionRequest
from covey.permissions.modes import MODES
from covey.permissions.rules import suggest_rule

Send = Callable[[Mapping[str, Any]], Awaitable[None]]
_RULE = re.compile(r"^(?P<tool>[^(]+)(?:\((?P<content>.*)\))?$", re.S)


class ClientRequests:
    """Control requests to the client, each answered by the ``control_response`` naming it."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.ended = False
        """The client's input has ended: it reads what covey says, but can answer nothing more."""

    async def request(self, subtype: str, **fields: Any) -> dict[str, Any]:
        """The client's ``response``; ``NoAnswer`` if it answered with an error, left, or can no longer answer."""
        if self.ended:
            raise NoAnswer("the program's input has ended: it can no longer answer")
        request_id = protocol.new_request_id()
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = answer
        try:
            await self.send(protocol.control_request(subtype, request_id, **fields))
            return await answer
        finally:
            self._waiting.pop(request_id, None)

    def answered(self, message: Mapping[str, Any]) -> None:
        """A ``control_response`` from the client: the answer to the request it names."""
        response = message.get("response") or {}
        waiting = self._waiting.get(str(response.get("request_id")))
        if waiting is None or waiting.done():
            return
        if response.get("subtype") == "success":
            waiting.set_result(response.get("response") or {})
        else:
            waiting.set_exception(NoAnswer(f"the client could not answer: {response.get('error')}"))

    def gone(self, why: str = "the client that could answer has gone") -> None:
        """The client left: nobody will answer the requests still open."""
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_exception(NoAnswer(why))

    def input_ended(self) -> None:
        """The client closed its input (claude-agent-sdk's ``query()`` may, before a resumed session's
        deferred call runs): what is open, and every later request, fails at once instead of waiting."""
        self.ended = True
        self.gone("the program's input has ended: it can no longer answer")


class NoAnswer(Exception):
    """The client answered a request with an error, or left before answering."""


class ClientAsker(ClientRequests):
    """A permission prompt as a ``can_use_tool`` request (a person, or the SDK's callback, answers)."""

    async def __call__(self, request: PermissionRequest) -> Answer:
        rule = request.suggested_rule or suggest_rule(request.tool_name, request.subject)
        try:
            response = await self.request(
                protocol.CAN_USE_TOOL, tool_name=request.tool_name, input=request.input,
                permission_suggestions=[_add_rule(rule)], decision_reason=request.reason,
                tool_use_id=request.tool_use_id, message=request.message, suggested_rule=rule,
                # As Claude Code's: only a sub-agent's prompt names its agent.
                **({"agent_id": request.agent_id} if request.agent_id else {}),
            )
        except NoAnswer as exc:
            response = {"behavior": "deny", "message": str(exc)}
        return from_response(response)


class HookCaller(ClientRequests):
    """Runs claude-agent-sdk hook callbacks: a ``hook_callback`` request, whose response is the
    hook's output (as a command hook prints it). ``NoAnswer`` fails that hook only, but for a
    ``PreToolUse`` one once the program's input has ended: that call is denied."""

    async def __call__(self, callback_id: str, payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        fields = {"callback_id": callback_id, "input": payload, "tool_use_id": tool_use_id}
        try:
            if self.ended:  # the program still reads covey's lines: its hook sees the call, though no answer can come
                await self.send(protocol.control_request(protocol.HOOK_CALLBACK, protocol.new_request_id(), **fields))
            return await self.request(protocol.HOOK_CALLBACK, **fields)
        except NoAnswer as exc:
            if not self.ended or payload.get("hook_event_name") != "PreToolUse":
                raise
            # The program's gate on tool calls can no longer be asked: the call does not run (fails closed).
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": f"the program's PreToolUse hook could not be asked: {exc}"}}


class McpRelayClient(ClientRequests):
    """Reaches the program's SDK MCP servers: an ``mcp_message`` request carrying one JSON-RPC
    message, whose response holds the server's reply (``mcp_response``)."""

    async def __call__(self, server_name: str, message: dict[str, Any]) -> dict[str, Any] | None:
        response = await self.request(protocol.MCP_MESSAGE, server_name=server_name, message=message)
        reply = response.get("mcp_response")
        return reply if isinstance(reply, dict) else None


def from_response(response: dict[str, Any]) -> Answer:
    if response.get("behavior") == "allow":
        rules = [_rule_text(value) for update in response.get("updatedPermissions") or []
                 if update.get("type") == "addRules" and update.get("behavior", "allow") == "allow"
                 for value in update.get("rules", [])]
        modes = [update["mode"] for update in response.get("updatedPermissions") or []
                 if update.get("type") == "setMode" and update.get("mode") in MODES]
        if rules or modes:
            return Allow(source="user", reason="always allowed at the terminal", add_allow_rules=rules,
                         set_mode=modes[-1] if modes else None)
        return True
    message = response.get("message") or ""
    return Deny(message=message, source="user", reason="denied by the client") if message else False


def _add_rule(rule: str) -> dict[str, Any]:
    """Claude Code's ``PermissionUpdate`` that adds ``rule`` to the session's allow list."""
    found = _RULE.match(rule)
    value = {"toolName": found["tool"]} if found else {"toolName": rule}
    if found and found["content"] is not None:
        value["ruleContent"] = found["content"]
    return {"type": "addRules", "rules": [value], "behavior": "allow", "destination": "session"}


def _rule_text(value: dict[str, Any]) -> str:
    content = value.get("ruleContent")
    return f"{value['toolName']}({content})" if content is not None else value["toolName"]
