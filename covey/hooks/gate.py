"""PreToolUse / PostToolUse hooks as the ToolExecutor's ``gate`` and ``after``.

Hooks run before the permission gate, as in Claude Code: a hook can block a
call the rules would allow, rewrite its input, or settle the permission itself
(``allow`` skips the permission check, ``ask`` forces a person's approval).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from covey.hooks.outcomes import PreToolOutcome
from covey.hooks.runner import HookRegistry
from covey.loop.execute import After, Gate
from covey.permissions.decisions import Ask, Deny
from covey.tools.base import Tool, ToolContext, ToolResult


def hook_gate(registry: HookRegistry, inner_gate: Gate | None = None) -> Gate:
    async def gate(tool: Tool, input: Any, ctx: ToolContext) -> Any:
        wire = input.model_dump(by_alias=True, exclude_none=True)
        outcome = await registry.run_pre_tool_use(
            ctx.agent_id, tool.name, wire, cwd=ctx.cwd, tool_use_id=ctx.tool_use_id,
            session_id=ctx.services.session_id,
        )
        if outcome.blocked or outcome.stop:
            why = outcome.reason or outcome.stop_reason or "no reason given"
            return ToolResult.error(f"{tool.name} was blocked by a PreToolUse hook: {why}")
        if outcome.updated_input is not None:
            # A hook may send only the fields it changes; the rest stay as the model sent them.
            try:
                input = tool.input_model.model_validate({**wire, **outcome.updated_input})
            except ValidationError as exc:
                return ToolResult.error(f"A PreToolUse hook changed the {tool.name} input into an invalid one: {exc}")
        return await _permission(outcome, inner_gate, tool, input, ctx)

    return gate


async def _permission(outcome: PreToolOutcome, inner: Gate | None, tool: Tool, input: Any, ctx: ToolContext) -> Any:
    if inner is None or outcome.permission_decision == "allow":
        return input
    if outcome.permission_decision == "ask" and getattr(inner, "policy", None) is not None:
        return await _ask(outcome, inner, tool, input, ctx)
    return await inner(tool, input, ctx)


async def _ask(outcome: PreToolOutcome, inner: Any, tool: Tool, input: Any, ctx: ToolContext) -> Any:
    """A hook's ``ask`` goes to a person even when a rule or the mode would have allowed the call."""
    wire = input.model_dump(by_alias=True, exclude_none=True)
    subject = tool.permission_subject(input, ctx)
    question = outcome.reason or f"A hook asks for approval: allow {tool.name}?"
    ask = Ask(tool_name=tool.name, subject=subject, input=wire, message=question, reason="PreToolUse hook")
    decision = await inner.policy.resolve(ask, agent_id=ctx.agent_id, tool_use_id=ctx.tool_use_id, asker=getattr(inner, "asker", None))
    if isinstance(decision, Deny):
        getattr(inner, "denials", []).append({"tool_name": tool.name, "tool_use_id": ctx.tool_use_id, "tool_input": wire})
        return ToolResult.error(decision.message)
    return input


def hook_after(registry: HookRegistry) -> After:
    async def after(tool: Tool, input: Any, result: ToolResult, ctx: ToolContext) -> ToolResult:
        outcome = await registry.run_post_tool_use(
            ctx.agent_id, tool.name, input.model_dump(by_alias=True, exclude_none=True),
            {"content": result.content, "is_error": result.is_error}, cwd=ctx.cwd,
            tool_use_id=ctx.tool_use_id, session_id=ctx.services.session_id,
        )
        notes = []
        if outcome.blocked:
            notes.append(f"PostToolUse hook feedback: {outcome.reason or 'the hook blocked this result'}")
        if outcome.additional_context:
            notes.append(outcome.additional_context)
        if not notes:
            return result
        return result.model_copy(update={"content": "\n\n".join([result.content, *notes])})

    return after
