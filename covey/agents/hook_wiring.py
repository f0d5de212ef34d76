"""What an agent's hooks reach beyond its loop, wired once its ``HookRegistry`` exists: the task
tools (``TaskCreated`` / ``TaskCompleted`` fire through ``ctx.services.hooks``), the session's
model (``prompt`` and ``agent`` hooks ask it), the agent's permission policy (an ``agent`` hook's
verifier reads what it allows), and, in a teammate, its turn-end check (``TaskCompleted`` for
the tasks it holds, then ``TeammateIdle``) after its Stop hooks.
"""

from __future__ import annotations

from typing import Any

from covey.hooks.runner import HookRegistry
from covey.loop.verifier import verifier
from covey.teams.context import team_context
from covey.teams.idle import teammate_turn_end
from covey.tools.base import ToolContext


def wire_hooks(hooks: HookRegistry, ctx: ToolContext, spec: Any, model: Any) -> None:
    """``spec``: the agent's ``AgentSpec`` (a teammate's carries its ``team``); ``model``: the session's."""
    ctx.services.hooks = hooks
    hooks.model = model
    hooks.verify = verifier(model, getattr(spec, "permissions", None), project_dir=hooks.project_dir, env=hooks.env)
    team = team_context(ctx.services)
    if getattr(spec, "team", None) is not None and team is not None and team.board is not None:
        hooks.after_stop = teammate_turn_end(hooks, team, cwd=spec.cwd)
