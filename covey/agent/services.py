"""What one agent run is given where it runs: its model, who answers its permission
prompts and hook callbacks, its inbox and team, and how its first messages are recorded.

Built in the agent actor's process (``AgentServices`` holds live objects, never
pickled); the runner (``covey.agent.runner``) builds one per run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Awaitable, Callable

import ray

from covey.agent.inbox import inbox_for
from covey.agent.lifecycle import AgentServices
from covey.agent.progress import CountedModel, Progress
from covey.agent.progress_reports import progress_reports
from covey.agent.team_context import team_context_for
from covey.events import Event, RateLimitEvent, TranscriptMirror
from covey.gateway.factory import make_model
from covey.gateway.ports import Pacing
from covey.gateway.remote_model import GatewayModel
from covey.hooks.callback import HookCall
from covey.mcp.relay import McpCall, McpRelay
from covey.model.anthropic_config import AnthropicConfig
from covey.ratelimit.actor import SharedAdmission
from covey.ratelimit.signals import RateLimitSettings
from covey.runtime.records import FinalReport
from covey.runtime.spec import AgentSpec
from covey.transcripts.transcript import TranscriptWriter

Ask = Callable[[Any], Awaitable[Any]]
"""Shows a prompt to the person at the root of an event stream and returns the answer."""
HookCaller = Callable[[str, dict[str, Any], "str | None"], Awaitable[dict[str, Any]]]


def run_services(spec: AgentSpec, *, ask: Ask, emit: Callable[[Event], None], progress: Progress,
                 writer: TranscriptWriter) -> AgentServices:
    """The services of ``spec``'s run: ``ask`` is this actor's own (the main agent asks through it)."""

    if spec.settings.session_mirror:
        writer.mirror = mirrored(spec, emit)
        writer.mirror_metadata()  # a sub-agent's, written before its run had a stream to mirror to

    async def record_start(messages: list[dict[str, Any]], typed: frozenset[int] | None = None) -> None:
        # What the person typed (the prompt: by default the last; a slash command) is a plain
        # record; the rest (project context, the agent list, hooks' context) is meta, as Claude
        # Code marks it: the SDK's readers skip it (get_session_messages, a session's first
        # prompt); resume still reads it.
        shown = typed if typed is not None else {len(messages) - 1}
        for index, message in enumerate(messages):
            meta = index not in shown and message["role"] == "user"
            await writer.append(message["role"], message, isMeta=True if meta else None)
        for mention in spec.mentions if typed is not None else ():  # the prompt's files, after it (Claude Code's)
            await writer.append("attachment", None, attachment=mention)

    model = paced(model_of(spec.model, spec.settings.env), spec, rate_waits_shown(spec, emit, progress))
    aside = CountedModel(model, progress)
    reports = progress_reports(spec, progress, aside, emit)  # a sub-agent's task_progress events
    if reports is not None:
        progress.on_tool_turn = reports.tool_turn
    return AgentServices(
        model=model, aside_model=aside, progress_reports=reports,
        asker=asker_for(spec, ask),
        hook_caller=hook_caller_for(spec, ask),
        inbox=inbox_for(spec, emit),
        cost_of=progress.prices.cost_usd,
        emit=emit,
        on_start=record_start,
        team=team_context_for(spec),
        budget_spent=lambda: progress.budget_spent,
        mcp_relay=mcp_relay_for(spec, ask),
    )


def root_ask(spec: AgentSpec, own: Ask) -> Ask | None:
    """Who shows this agent's prompts: its own actor for the main agent (the session reads
    its events), else the session's root actor (prompts bubble up), if there is one."""
    if spec.depth == 0:
        return own
    root = spec.runtime.root if spec.runtime is not None else None
    return root.ask if root is not None else None


def asker_for(spec: AgentSpec, own: Ask) -> Ask | None:
    """Who answers this agent's permission prompts (docs/definitions.md#permissions: agents that cannot ask deny)."""
    return root_ask(spec, own) if spec.settings.can_ask else None


def hook_caller_for(spec: AgentSpec, own: Ask) -> HookCaller | None:
    """How this agent runs the SDK client's hook callbacks: it asks the session's root (the
    main agent's actor, whose events the session reads), as permission prompts bubble."""
    ask = root_ask(spec, own)
    if ask is None:
        return None

    async def call(callback_id: str, payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        answer = await ask(HookCall(callback_id=callback_id, input=payload, tool_use_id=tool_use_id))
        if not isinstance(answer, dict):
            raise RuntimeError("no claude-agent-sdk client answered the hook callback")
        return answer

    return call


def mcp_relay_for(spec: AgentSpec, own: Ask) -> McpRelay | None:
    """How this agent reaches the SDK program's MCP servers: through the session's root, as
    its hook callbacks do; None where nobody follows the session (no program to reach)."""
    ask = root_ask(spec, own)
    if ask is None:
        return None

    async def relay(server: str, message: dict[str, Any]) -> dict[str, Any] | None:
        answer = await ask(McpCall(server=server, message=message))
        if answer is False:  # the root's run has ended: nobody relays any more
            raise RuntimeError(f"nobody relays to the SDK MCP server {server!r} now (the session's turn has ended)")
        return answer if isinstance(answer, dict) else None

    return relay


def model_of(source: Any, env: dict[str, str] | None) -> Any:
    """A Model object travels as is, the real one as its ``AnthropicConfig``; a spec string is
    built here, where the agent runs, from the run's env (the real model as its config). Under
    Ray a config stays one (``paced`` sends it through the node's gateway, and this process
    never loads the SDK); without Ray it becomes this process's ``AnthropicModel``."""
    model = source if hasattr(source, "create") or isinstance(source, AnthropicConfig) else make_model(
        source, env=env, sdk=False)
    if isinstance(model, AnthropicConfig) and not ray.is_initialized():
        from covey.gateway.anthropic import AnthropicModel

        return AnthropicModel.of(model)
    return model


def paced(model: Any, spec: AgentSpec, emit: Callable[[Event], None]) -> Any:
    """Under Ray, the model whose requests wait for the identity's shared rate scheduler, its
    waits emitted as ``rate_limit_event`` lines; the main agent and sync children wait in front
    of their session's background work. The real model (its config) sends through the node's
    gateway, which holds the SDK and asks the scheduler (``GatewayModel``); another model that
    takes an admission asks the scheduler from here."""
    if not ray.is_initialized():
        return model
    env = spec.settings.env if spec.settings.env is not None else os.environ
    pacing = Pacing(session_id=spec.session_id, agent_id=spec.agent_id, foreground=spec.depth == 0 or not spec.background,
                    settings=RateLimitSettings.load(spec.settings.rate_limits, env))
    if isinstance(model, AnthropicConfig):
        return GatewayModel(model, pacing=pacing, emit=emit)
    if not hasattr(model, "with_admission"):
        return model
    return model.with_admission(SharedAdmission(session_id=pacing.session_id, agent_id=pacing.agent_id,
                                                foreground=pacing.foreground, settings=pacing.settings, emit=emit))


def rate_waits_shown(spec: AgentSpec, emit: Callable[[Event], None], progress: Progress) -> Callable[[Event], None]:
    """Where a model request's rate-limit waits go: the agent's figures (``covey ps``, the tree),
    and the stream a person reads: the run's own for the main agent and a sync child (its parent
    follows it), the session root's for a background child, whose own events nobody follows."""
    runtime = spec.runtime
    root = runtime.root if runtime is not None and spec.depth > 0 and spec.background else None

    def shown(event: Event) -> None:
        if isinstance(event, RateLimitEvent):
            progress.rate_waiting(event.rate_limit_info)
        if root is not None:
            root.tell_relay(event)
        else:
            emit(event)

    return shown


def mirrored(spec: AgentSpec, emit: Callable[[Event], None]) -> Callable[[Path, dict[str, Any]], None]:
    """Where this agent's transcript records go for the program's session store: its own stream
    for the main agent and a sync child, the session root's for a background child (as its rate
    waits); while no turn streams, a background child's are not kept."""
    runtime = spec.runtime
    root = runtime.root if runtime is not None and spec.depth > 0 and spec.background else None

    def mirror(path: Path, record: dict[str, Any]) -> None:
        event = TranscriptMirror(session_id=spec.session_id, agent_id=spec.agent_id, filePath=str(path),
                                 entries=[record])
        root.tell_relay(event) if root is not None else emit(event)

    return mirror


def safe_report(progress: Progress, status: Any, reason: str, services: AgentServices | None) -> FinalReport:
    """The run's report; a report that cannot be built still reports, as a failure."""
    worktree = services.outcome.get("worktree") if services is not None else None
    try:
        return progress.report(status=status, reason=reason, worktree=worktree)
    except Exception as exc:  # a report that cannot be built still reports
        return FinalReport(status="failed", text=f"the agent's report could not be built: {exc}")
