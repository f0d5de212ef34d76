"""Tool-call hooks as the ToolExecutor's ``gate`` and ``after``, and PermissionRequest hooks
as the permission gate's ``on_request``.

Hooks run before the permission gate, as in Claude Code: a PreToolUse hook can
block a call the rules would allow, rewrite its input, or settle the permission
itself. Its ``allow`` answers what the mode would have asked, never a rule: a deny
rule still refuses the call and an ask rule still asks a person (managed rules
included), and plan mode stays read-only. Its ``ask`` forces a person's approval.
When a person would be asked, PermissionRequest hooks may answer for them. After
the call, PostToolUse hooks see a success and PostToolUseFailure hooks a failure.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

from pydantic import ValidationError

from covey.hooks.outcomes import HookOutcome, PreToolOutcome, RequestVerdict
from covey.hooks.runner import HookRegistry
from covey.loop.execute import After, AfterBatch, Gate
from covey.permissions.decisions import Allow, Ask, Deny
from covey.permissions.rules import suggest_rule
from covey.tools.base import Tool, ToolContext, ToolResult

log = logging.getLogger(__name__)

DEFERRED = ("A PreToolUse hook deferred this call, and it did not run: only a reply's one call can wait for a "
            "resumed session; call the tools one at a time.")
"""The result of a deferred call made beside others: the run goes on without it."""

OnRequest = Callable[[Tool, Any, ToolContext, Ask], Awaitable["tuple[Allow | Deny, Any] | None"]]
"""Before a person is asked: a decision and the input to run with, or None to ask."""


def hook_gate(registry: HookRegistry, inner_gate: Gate | None = None) -> Gate:
    async def gate(tool: Tool, input: Any, ctx: ToolContext) -> Any:
        wire = input.model_dump(by_alias=True, exclude_none=True)
        outcome = await registry.run_pre_tool_use(
            ctx.agent_id, tool.name, wire, cwd=ctx.cwd, tool_use_id=ctx.tool_use_id,
            session_id=ctx.services.session_id, subject=tool.permission_subject(input, ctx),
        )
        if outcome.stop:
            registry.halt("PreToolUse", outcome.stop_reason)
        if outcome.blocked or outcome.stop:
            why = outcome.reason or outcome.stop_reason or "no reason given"
            return ToolResult.error(f"{tool.name} was blocked by a PreToolUse hook: {why}")
        if outcome.permission_decision == "defer":  # the program decides later: the run ends on this call
            registry.deferred = {"id": ctx.tool_use_id, "name": tool.name, "input": wire}
            return ToolResult.error(DEFERRED)
        if outcome.additional_context and ctx.tool_use_id:
            # Claude Code puts a PreToolUse hook's context next to the call's result.
            registry.pre_tool_context[ctx.tool_use_id] = outcome.additional_context
        if outcome.updated_input is not None:
            # A hook may send only the fields it changes; the rest stay as the model sent them.
            try:
                input = tool.input_model.model_validate({**wire, **outcome.updated_input})
            except ValidationError as exc:
                return ToolResult.error(f"A PreToolUse hook changed the {tool.name} input into an invalid one: {exc}")
        return await _permission(outcome, inner_gate, tool, input, ctx)

    return gate


async def _permission(outcome: PreToolOutcome, inner: Gate | None, tool: Tool, input: Any, ctx: ToolContext) -> Any:
    if inner is None:
        return input
    policy = getattr(inner, "policy", None)
    if outcome.permission_decision == "allow":
        return input if policy is None else await _hook_allowed(policy, inner, tool, input, ctx)
    if outcome.permission_decision == "ask" and policy is not None:
        wire = input.model_dump(by_alias=True, exclude_none=True)
        question = outcome.reason or f"A hook asks for approval: allow {tool.name}?"
        ask = Ask(tool_name=tool.name, subject=tool.permission_subject(input, ctx), input=wire, message=question,
                  reason="PreToolUse hook")
        return await _ask(ask, inner, tool, input, ctx)
    return await inner(tool, input, ctx)


async def _hook_allowed(policy: Any, inner: Any, tool: Tool, input: Any, ctx: ToolContext) -> Any:
    """A hook's ``allow`` stands where only the mode would have asked; a deny rule (or plan mode)
    still refuses the call, and an ask rule still goes to a person."""
    wire = input.model_dump(by_alias=True, exclude_none=True)
    decision = policy.decide(tool.name, tool.read_only or tool.coordination, tool.permission_subject(input, ctx), wire)
    # dontAsk turns what the mode would have asked into a denial: the hook's allow answers that one.
    mode_would_ask = decision.rule is None and decision.source == "mode:dontAsk"
    if isinstance(decision, Deny) and not mode_would_ask:
        getattr(inner, "denials", []).append({"tool_name": tool.name, "tool_use_id": ctx.tool_use_id, "tool_input": wire})
        return ToolResult.error(decision.message)
    if isinstance(decision, Ask) and decision.rule is not None:
        return await _ask(decision, inner, tool, input, ctx)
    return input


async def _ask(ask: Ask, inner: Any, tool: Tool, input: Any, ctx: ToolContext) -> Any:
    """A person decides (after PermissionRequest hooks), whatever the mode would have done: a
    hook's ``ask``, or an ask rule a hook's ``allow`` may not answer."""
    wire = input.model_dump(by_alias=True, exclude_none=True)
    decision: Any = ask
    if (on_request := getattr(inner, "on_request", None)) is not None and (answered := await on_request(tool, input, ctx, ask)):
        decision, input = answered
    decision = await inner.policy.resolve(decision, agent_id=ctx.agent_id, tool_use_id=ctx.tool_use_id, asker=getattr(inner, "asker", None))
    if isinstance(decision, Deny):
        getattr(inner, "denials", []).append({"tool_name": tool.name, "tool_use_id": ctx.tool_use_id, "tool_input": wire})
        return ToolResult.error(decision.message)
    return input


def permission_request_hook(registry: HookRegistry, policy: Any, *, bypass_disabled: bool = False) -> OnRequest:
    """PermissionRequest hooks, run when the policy would ask a person (or deny for want of one).
    ``bypass_disabled``: settings' ``disableBypassPermissionsMode``: a ``setMode`` to bypass is refused."""

    async def on_request(tool: Tool, input: Any, ctx: ToolContext, ask: Ask) -> tuple[Allow | Deny, Any] | None:
        wire = input.model_dump(by_alias=True, exclude_none=True)
        suggestion = {"type": "addRules", "rules": [_rule_entry(suggest_rule(tool.name, ask.subject))],
                      "behavior": "allow", "destination": "session"}
        verdict = await registry.run_permission_request(
            ctx.agent_id, tool.name, wire, subject=ask.subject, suggestions=[suggestion], cwd=ctx.cwd)
        if verdict is None:
            return None
        if verdict.behavior == "deny":
            message = verdict.message or f"Permission to use {tool.name} was denied by a PermissionRequest hook."
            return Deny(tool_name=tool.name, subject=ask.subject, input=wire, message=message, source="hook",
                        reason="PermissionRequest hook"), input
        return _allowed(verdict, policy, tool, input, ctx, ask, bypass_disabled)

    return on_request


def _allowed(verdict: RequestVerdict, policy: Any, tool: Tool, input: Any, ctx: ToolContext, ask: Ask,
             bypass_disabled: bool) -> tuple[Allow | Deny, Any]:
    _apply_updates(verdict.updated_permissions or [], policy, bypass_disabled)
    if verdict.updated_input is not None:
        try:
            input = tool.input_model.model_validate(verdict.updated_input)
        except ValidationError as exc:
            return Deny(tool_name=tool.name, subject=ask.subject, input=ask.input, source="hook",
                        message=f"A PermissionRequest hook changed the {tool.name} input into an invalid one: {exc}",
                        reason="PermissionRequest hook"), input
        # The changed input is checked against the deny rules again, as in Claude Code.
        again = policy.decide(tool.name, tool.read_only, tool.permission_subject(input, ctx),
                              input.model_dump(by_alias=True, exclude_none=True))
        if isinstance(again, Deny):
            return again, input
    wire = input.model_dump(by_alias=True, exclude_none=True)
    return Allow(tool_name=tool.name, subject=ask.subject, input=wire, source="hook", reason="PermissionRequest hook"), input


def _apply_updates(updates: list[Any], policy: Any, bypass_disabled: bool = False) -> None:
    """``addRules`` and ``setMode`` take effect for this session (covey writes no settings file);
    a ``setMode`` to bypassPermissions where settings disable it is refused, with a warning."""
    for update in updates:
        if not isinstance(update, dict):
            continue
        if update.get("type") == "addRules" and update.get("behavior") in ("allow", "deny", "ask"):
            for rule in update.get("rules") or []:
                text = rule.get("toolName", "") + (f"({rule['ruleContent']})" if rule.get("ruleContent") else "")
                policy.add_rule(update["behavior"], text, source="session")
        elif update.get("type") == "setMode" and update.get("mode") == "bypassPermissions" and bypass_disabled:
            log.warning("a PermissionRequest hook's setMode to bypassPermissions was refused: "
                        "settings disable it (disableBypassPermissionsMode)")
        elif update.get("type") == "setMode" and isinstance(update.get("mode"), str):
            policy.mode = "default" if update["mode"] == "manual" else update["mode"]


def _rule_entry(rule: str) -> dict[str, str]:
    name, paren, rest = rule.partition("(")
    return {"toolName": name, **({"ruleContent": rest[:-1]} if paren else {})}


def hook_after(registry: HookRegistry) -> After:
    async def after(tool: Tool, input: Any, result: ToolResult, ctx: ToolContext) -> ToolResult:
        wire = input.model_dump(by_alias=True, exclude_none=True)
        common: dict[str, Any] = {"cwd": ctx.cwd, "tool_use_id": ctx.tool_use_id, "session_id": ctx.services.session_id,
                  "subject": tool.permission_subject(input, ctx)}
        if result.is_error:
            outcome = await registry.run_post_tool_use_failure(ctx.agent_id, tool.name, wire, result.content, **common)
            label = "PostToolUseFailure"
        else:
            response = {"content": result.content, "is_error": result.is_error}
            outcome = await registry.run_post_tool_use(ctx.agent_id, tool.name, wire, response, **common)
            label = "PostToolUse"
        if outcome.stop:
            registry.halt(label, outcome.stop_reason)
        notes = _notes(label, outcome)
        if before := registry.pre_tool_context.pop(ctx.tool_use_id or "", None):
            notes.insert(0, before)
        if late := registry.background.take():
            notes.append(late)  # what background hooks said since: the model reads it with this result
        if not notes:
            return result
        return result.model_copy(update={"content": "\n\n".join([result.content, *notes])})

    return after


def hook_after_batch(registry: HookRegistry) -> AfterBatch:
    """PostToolBatch hooks, once every call of a reply has its result: their context (or a block's
    reason) is what the model reads after the results; ``continue: false`` ends the run there."""
    async def after_batch(calls: Any, results: dict[str, dict[str, Any]], ctx: ToolContext) -> str | None:
        tool_calls = [{"tool_name": call.name, "tool_input": call.input, "tool_use_id": call.id,
                       "tool_response": (results.get(call.id) or {}).get("content")} for call in calls]
        outcome = await registry.run_post_tool_batch(ctx.agent_id, tool_calls, session_id=ctx.services.session_id,
                                                     cwd=ctx.cwd)
        if outcome.stop:
            registry.halt("PostToolBatch", outcome.stop_reason)
        return "\n\n".join(_notes("PostToolBatch", outcome)) or None

    return after_batch


def _notes(label: str, outcome: HookOutcome) -> list[str]:
    notes = []
    if outcome.blocked:
        notes.append(f"{label} hook feedback: {outcome.reason or 'the hook blocked this result'}")
    if outcome.additional_context:
        notes.append(outcome.additional_context)
    return notes
