"""``run_agent``: the one lifecycle every agent kind flows through (docs/architecture.md#one-spawn-end-to-end).

It builds the agent's context, hooks and loop from an already-resolved
``AgentSpec``, yields the agent's events as they happen, and releases
everything the agent touched in ``finally`` — on success, error and
cancellation alike: shell processes, the read-file cache, todos, its hooks,
its worktree.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

from covey.agent.catalog import tool_catalog
from covey.agent.hook_wiring import fire_instructions_loaded, fire_stop_failure, wire_hooks
from covey.agent.opening import OnStart, PromptStopped, opening, stopped_result
from covey.definitions.skill_tool import GRANT_SOURCE
from covey.events import Event, McpServerFailed
from covey.hooks.runner import HookRegistry
from covey.hooks.tool_gate import hook_after, hook_after_batch, hook_gate
from covey.hooks.tool_gate import permission_request_hook
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.loop.compact import Compactor, compact_limits
from covey.loop.compacting import compact_now
from covey.loop.gate import PermissionGate
from covey.mcp import attach_servers, detach_servers, hook_caller
from covey.model.base import Model
from covey.model.limits import LimitTable
from covey.runtime.spec import AgentSpec
from covey.runtime.worktree_hooks import finish_with_hooks
from covey.subagents.fork import CacheSafeParams
from covey.tools.base import Tool, ToolContext, ToolServices
from covey.tools.processes import ProcessTracker
from covey.tools.structured_output import StructuredOutput
from covey.tools.todo import clear_todos
from covey.transcripts.transcript import agent_transcript


@dataclass
class AgentServices:
    """Live collaborators of one agent run, built where it runs (not picklable)."""

    model: Model
    asker: Callable[[Any], Awaitable[Any]] | None = None
    inbox: Any = None
    extra_tools: list[Tool] = field(default_factory=list)
    cost_of: Callable[[str, Any], float] | None = None
    emit: Callable[[Event], None] | None = None
    """Where tools send events of their own (a child's progress, task_started)."""
    outcome: dict[str, Any] = field(default_factory=dict)
    """What the run leaves for its report (the worktree outcome)."""
    on_start: OnStart | None = None
    """Sees the opening messages of a run new to its transcript, which records them."""
    team: Any = None
    """The agent's TeamContext, when teams are enabled."""
    hook_caller: Callable[[str, dict[str, Any], str | None], Awaitable[Any]] | None = None
    aside_model: Model | None = None
    """The model as tools (WebFetch, WebSearch), prompt hooks and agent hooks' verifiers ask it: their
    replies count as the agent's spending. None: ``model`` itself."""
    mcp_relay: Callable[[str, dict[str, Any]], Awaitable[Any]] | None = None
    """How SDK MCP servers' messages reach the claude-agent-sdk program (None: no program)."""
    budget_spent: Callable[[], str | None] = lambda: None
    """Why the session's budget is spent (the registry says so with each model turn), None while it is not."""
    progress_reports: Any = None
    """A background agent's ``task_progress`` events (``ProgressReports``): started with its loop, stopped at its end."""
    """Runs the SDK client's hook callbacks (``HookRegistry.callback``), if the session has a client."""


def available_tools(spec: AgentSpec, services: AgentServices) -> list[Tool]:
    """The spec's tool pool as Tool objects, in a stable order."""
    wanted = set(spec.tool_names)
    options = spec.runtime.tools if spec.runtime is not None else None
    answer = [StructuredOutput(spec.output_schema)] if spec.output_schema is not None and spec.depth == 0 else []
    return [tool for tool in [*tool_catalog(options), *services.extra_tools] if tool.name in wanted] + answer


async def run_agent(spec: AgentSpec, services: AgentServices) -> AsyncIterator[Event]:
    ctx = _context(spec, services)
    hooks = _hooks(spec, services)
    wire_hooks(hooks, ctx, spec, services.aside_model or services.model)  # task tools, prompt and agent hooks, a teammate's idle check
    mcp = None
    try:
        mcp = await attach_servers(spec, services.mcp_relay)  # step 11: before the loop, so their tools are in the pool
        hooks.mcp_call = hook_caller(mcp)  # mcp_tool hooks call the agent's own servers
        loop = _build_loop(spec, services, ctx, hooks, mcp.tools if mcp is not None else [])
        for server, message in mcp.failures if mcp is not None else []:
            yield McpServerFailed(session_id=spec.session_id, agent_id=spec.agent_id, server=server, message=message)
        ctx.services.cache_safe = _cache_safe(spec, loop, ctx)
        if services.progress_reports is not None:  # its summaries fork the loop's requests
            services.progress_reports.start(loop)
        if spec.compact_request is not None:  # /compact: the conversation summarised, nothing asked
            async for event in compact_now(loop, list(spec.history or []), spec.compact_request):
                yield event
            return
        try:
            messages = await opening(spec, hooks, services.on_start)
        except PromptStopped as stopped:  # a UserPromptSubmit hook said "continue": false
            yield stopped_result(spec, str(stopped))
            return
        if hooks.session_env:
            # What SessionStart hooks wrote to CLAUDE_ENV_FILE: the agent's Bash calls run with it.
            ctx.env = {**(ctx.env if ctx.env is not None else os.environ), **hooks.session_env}
        async for event in loop.run(messages):
            await fire_stop_failure(hooks, event, spec.agent_id, spec.cwd, loop.messages)  # before the result goes out
            yield event
    finally:
        if services.progress_reports is not None:
            await services.progress_reports.stop()
        await hooks.background.settle()
        if hasattr(spec.permissions, "drop_rules"):
            spec.permissions.drop_rules(GRANT_SOURCE)  # a skill's allowed-tools last for this run only
        hooks.remove(spec.agent_id)
        await detach_servers(mcp)  # inline servers stop; a shared one with its last user in this process
        await release(ctx)
        if spec.worktree:
            services.outcome["worktree"] = await finish_with_hooks(spec.worktree, hooks, spec.agent_id)


def _context(spec: AgentSpec, services: AgentServices) -> ToolContext:
    runtime = spec.runtime
    skills = runtime.skills if runtime is not None else {}
    return ToolContext(
        agent_id=spec.agent_id,
        cwd=Path(spec.cwd),
        read_files=dict(spec.read_files),
        processes=ProcessTracker(),
        env=spec.settings.env,
        services=ToolServices(runtime=runtime, spec=spec, session_id=spec.session_id, skills=skills,
                              team=services.team, inbox=services.inbox, model=services.aside_model or services.model),
        emit=services.emit,
    )


def _hooks(spec: AgentSpec, services: AgentServices) -> HookRegistry:
    """Settings hooks for everyone, plus this definition's, scoped to this agent (step 9).

    Payloads carry the session's transcript as ``transcript_path``; a sub-agent's own is its
    ``agent_transcript_path`` (SubagentStop), and its ``agent_id`` / ``agent_type`` name it."""
    own = str(agent_transcript(spec))
    hooks = HookRegistry(
        spec.settings.hooks, project_dir=spec.settings.project_dir or spec.cwd, env=spec.settings.env,
        callback=services.hook_caller, session_id=spec.session_id,
        transcript_path=spec.settings.session_transcript or own,
        mode_of=lambda: getattr(spec.permissions, "mode", None),
    )
    hooks.describe(spec.agent_id, agent_type=spec.definition.name, subagent=spec.depth > 0, transcript_path=own)
    if spec.settings.hook_events and spec.depth == 0:  # Claude Code shows the main agent's
        hooks.on_event = services.emit
    if spec.definition.hooks:
        hooks.register(spec.agent_id, spec.definition.hooks, source=spec.definition.path or f"agent {spec.definition.name!r}")
    return hooks


def _build_loop(spec: AgentSpec, services: AgentServices, ctx: ToolContext, hooks: HookRegistry,
                mcp_tools: list[Tool]) -> AgentLoop:
    asker = hooks.notifying(services.asker, spec.agent_id)
    inner = None
    if spec.permissions is not None:
        bypass_disabled = spec.settings.bypass_disabled
        on_request = permission_request_hook(hooks, spec.permissions, bypass_disabled=bypass_disabled)
        inner = PermissionGate(spec.permissions, asker, on_request=on_request, bypass_disabled=bypass_disabled)
    # MCP tools (mcp__*) pass every filter of the pool, as in Claude Code (docs/mcp.md).
    executor = ToolExecutor([*available_tools(spec, services), *mcp_tools], ctx, gate=hook_gate(hooks, inner), after=hook_after(hooks))
    executor.after_batch = hook_after_batch(hooks)
    config = LoopConfig(
        model_id=spec.model_id, system=spec.system, max_turns=spec.max_turns, effort=spec.effort,
        tool_result_reminder=spec.definition.critical_system_reminder,
        # Resumed agents were woken by mail; teammates can be messaged by name once in the roster.
        mail_before_first_turn=bool(spec.history) or bool(spec.team),
        # Claude Code streams the main agent's replies only.
        partial_messages=spec.settings.partial_messages and spec.depth == 0,
        thinking=spec.thinking, tools=spec.exact_tools, inherited=len(spec.inherited or []),
        max_tokens=_limits(spec).max_tokens(spec.model_id), task_budget=spec.task_budget, betas=spec.settings.betas,
    )
    loop = AgentLoop(
        model=services.model, config=config, executor=executor, session_id=spec.session_id,
        agent_id=spec.agent_id, cost_of=services.cost_of, inbox=services.inbox,
        parent_tool_use_id=spec.tool_use_id, stop_check=_stop_check(spec, hooks), halted=lambda: hooks.halted,
        spent=services.budget_spent, deferred=hooks.take_deferred if spec.depth == 0 else lambda: None,
        compactor=_compactor(spec, hooks, ctx),
    )
    if inner is not None:
        inner.denials = loop.denials
        ctx.services.confirm = inner.confirm
    return loop


def _env(spec: AgentSpec) -> dict[str, str]:
    return dict(spec.settings.env if spec.settings.env is not None else os.environ)


def _limits(spec: AgentSpec) -> LimitTable:
    return LimitTable.load(spec.settings.model_limits, env=_env(spec))


def _compactor(spec: AgentSpec, hooks: HookRegistry, ctx: ToolContext) -> Compactor:
    """The agent's compaction (docs/compaction.md): PreCompact hooks before it may block it or add
    instructions (their plain stdout); SessionStart hooks with source ``compact``, then PostCompact
    hooks, after it; its
    prelude (project instructions, agent and skill lists) comes back with the summary."""
    limits = compact_limits(spec.model_id, _limits(spec), _env(spec), enabled=spec.settings.auto_compact)

    async def before(trigger: str) -> tuple[bool, str | None]:
        outcome = await hooks.run_pre_compact(trigger, agent_id=spec.agent_id, cwd=spec.cwd)
        return outcome.blocked, outcome.additional_context

    async def after(trigger: str, summary: str) -> str | None:
        outcome = await hooks.run_session_start(source="compact", cwd=spec.cwd, model=spec.model_id)
        await fire_instructions_loaded(hooks, spec, spec.prelude, "compact")  # the prelude comes back
        await hooks.run_post_compact(trigger, summary, agent_id=spec.agent_id, cwd=spec.cwd)
        return outcome.additional_context

    own = str(agent_transcript(spec))
    return Compactor(limits, before=before, after=after, read_files=ctx.read_files, transcript=own,
                     context=spec.prelude)


def _cache_safe(spec: AgentSpec, loop: AgentLoop, ctx: ToolContext) -> Callable[[], CacheSafeParams]:
    """What a fork of this agent starts from: its last request as sent, and its read-file cache."""

    def params() -> CacheSafeParams:
        system, tools, messages = loop.cache_safe_params()
        return CacheSafeParams(system=system, tools=tools, messages=messages, thinking=spec.thinking,
                               read_files=dict(ctx.read_files))

    return params


def _stop_check(spec: AgentSpec, hooks: HookRegistry) -> Callable[[str], Awaitable[str | None]]:
    """Stop / SubagentStop hooks may send the agent back to work, once per answer (``stop_hook_active``)."""
    state = {"active": False}

    async def check(text: str) -> str | None:
        outcome = await hooks.run_stop(
            spec.agent_id, subagent=spec.depth > 0, last_message=text, stop_hook_active=state["active"], cwd=spec.cwd,
        )
        state["active"] = outcome.blocked and not outcome.stop
        if outcome.stop:
            hooks.halt("SubagentStop" if spec.depth > 0 else "Stop", outcome.stop_reason)
        return (outcome.reason or "A Stop hook asked you to continue.") if state["active"] else None

    return check


async def release(ctx: ToolContext) -> None:
    """Step 15: free what the agent touched. Idempotent."""
    if ctx.processes is not None:
        await ctx.processes.kill_all()
    ctx.read_files.clear()
    clear_todos(ctx)
