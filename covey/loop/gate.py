"""The permission gate every tool call passes before it runs (docs/definitions.md#permissions).

The policy decides from rules and mode; what needs a person goes to the asker
(a terminal, a notebook callback, or the root via a bubbling actor). A denial
becomes an error result the model reads, and is recorded for the run's
``permission_denials`` like Claude Code's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from covey.permissions.decisions import Ask, Decision, Deny
from covey.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from covey.hooks.tool_gate import OnRequest
    from covey.permissions.askers import Asker
    from covey.permissions.policy import PermissionPolicy


class PermissionGate:
    def __init__(self, policy: PermissionPolicy, asker: Asker | None = None, on_request: OnRequest | None = None, *,
                 bypass_disabled: bool = False) -> None:
        self.policy = policy
        self.bypass_disabled = bypass_disabled
        """Settings disable bypassPermissions: whatever put the policy in it (an answer's ``setMode``),
        the call is decided in ``default`` mode (docs/definitions.md#settings-that-cannot-be-turned-against-you)."""
        self.asker = asker
        self.on_request = on_request
        """``async (tool, input, ctx, ask) -> (decision, input) | None``: PermissionRequest hooks,
        which may answer before a person is asked (``covey.hooks.tool_gate.permission_request_hook``)."""
        self.denials: list[dict[str, Any]] = []

    async def __call__(self, tool: Tool, input: Any, ctx: ToolContext) -> Any:
        if self.bypass_disabled and self.policy.mode == "bypassPermissions":
            self.policy.mode = "default"
        subject = tool.permission_subject(input, ctx)
        wire = input.model_dump(by_alias=True, exclude_none=True)
        needs_no_approval = tool.read_only or tool.coordination
        decision = self.policy.decide(tool.name, needs_no_approval, subject, wire)
        if isinstance(decision, Ask) and self.on_request is not None and (answered := await self.on_request(tool, input, ctx, decision)):
            decision, input = answered
        decision = await self.policy.resolve(decision, agent_id=ctx.agent_id, tool_use_id=ctx.tool_use_id, asker=self.asker)
        if isinstance(decision, Deny):
            self.denials.append({"tool_name": tool.name, "tool_use_id": ctx.tool_use_id, "tool_input": wire})
            return ToolResult.error(decision.message)
        return input

    async def confirm(self, tool: Tool, input: Any, ctx: ToolContext, ask: Ask) -> Decision:
        """An approval a tool asks for itself (an Agent call that would start a more permissive child):
        PermissionRequest hooks first, then the person; no one to ask means denied."""
        decision: Decision = ask
        if self.on_request is not None and (answered := await self.on_request(tool, input, ctx, ask)):
            decision, _ = answered
        decision = await self.policy.resolve(decision, agent_id=ctx.agent_id, tool_use_id=ctx.tool_use_id, asker=self.asker)
        if isinstance(decision, Deny):
            wire = input.model_dump(by_alias=True, exclude_none=True)
            self.denials.append({"tool_name": tool.name, "tool_use_id": ctx.tool_use_id, "tool_input": wire})
        return decision
