"""What an agent's hooks reach beyond its loop, wired once its ``HookRegistry`` exists: the task
tools (``TaskCreated`` / ``TaskCompleted`` fire through ``ctx.services.hooks``), the session's
model (``prompt`` and ``agent`` hooks ask it), the agent's permission policy (an ``agent`` hook's
verifier reads what it allows), and, in a teammate, its turn-end check (``TaskCompleted`` for
the tasks it holds, then ``TeammateIdle``) after its Stop hooks; and the StopFailure hooks of a
turn a failure ended, and the InstructionsLoaded hooks of the instruction files an agent's context got.
"""

from __future__ import annotations

from typing import Any

from covey.definitions.context import loaded_instructions
from covey.events import ResultEvent
from covey.hooks.runner import HookRegistry
from covey.hooks.teammate_idle import teammate_turn_end
from covey.hooks.verifier import verifier
from covey.teams.context import team_context
from covey.tools.base import ToolContext


def wire_hooks(hooks: HookRegistry, ctx: ToolContext, spec: Any, model: Any) -> None:
    """``spec``: the agent's ``AgentSpec`` (a teammate's carries its ``team``); ``model``: the session's."""
    ctx.services.hooks = hooks
    hooks.model = model
    hooks.verify = verifier(model, getattr(spec, "permissions", None), project_dir=hooks.project_dir, env=hooks.env)
    team = team_context(ctx.services)
    if getattr(spec, "team", None) is not None and team is not None and team.board is not None:
        hooks.after_stop = teammate_turn_end(hooks, team, cwd=spec.cwd)


def failure_kind(event: Any) -> str | None:
    """Claude Code's StopFailure ``error`` for a result that ends a turn in failure: an API error
    (by its HTTP status) or a reply cut off at max_tokens; None for any other event."""
    if not isinstance(event, ResultEvent):
        return None
    if event.terminal_reason == "model_error" and event.stop_reason == "max_tokens":
        return "max_output_tokens"
    if event.terminal_reason != "api_error":
        return None
    status = event.api_error_status or 0
    if status >= 500:
        return "server_error"
    return _API_ERRORS.get(status, "unknown")


_API_ERRORS = {400: "invalid_request", 401: "authentication_failed", 402: "billing_error", 403: "authentication_failed",
               404: "invalid_request", 413: "invalid_request", 422: "invalid_request", 429: "rate_limit"}


async def fire_stop_failure(hooks: HookRegistry, event: Any, agent_id: str, cwd: str, messages: list[dict[str, Any]]) -> None:
    """StopFailure hooks for a turn an API error (or max_tokens) ended; their output is ignored."""
    if (kind := failure_kind(event)) is None:
        return
    await hooks.run_stop_failure(agent_id, kind, error_details=event.result, last_message=_last_text(messages), cwd=cwd)


def _last_text(messages: list[dict[str, Any]]) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text") or None
    return None


async def fire_instructions_loaded(hooks: HookRegistry, spec: Any, messages: list[dict[str, Any]], reason: str) -> None:
    """InstructionsLoaded hooks for each instructions file ``messages`` carry (the project's:
    ``memory_type`` ``Project``); ``reason``: ``session_start`` or ``compact``."""
    if not hooks.hooks_for("InstructionsLoaded", spec.agent_id, reason):
        return
    for path in loaded_instructions(messages, spec.cwd):
        await hooks.run_instructions_loaded(str(path), "Project", reason, agent_id=spec.agent_id, cwd=spec.cwd)
