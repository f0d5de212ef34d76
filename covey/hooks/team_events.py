"""The task board's and the team's hook events: ``TaskCreated``, ``TaskCompleted``, ``TeammateIdle``.

Claude Code fires them without a matcher. ``TaskCreated`` runs when TaskCreate adds a task (a
block deletes it again), ``TaskCompleted`` when TaskUpdate marks one completed (a block keeps
it open) and when a teammate ends a turn holding tasks in progress, ``TeammateIdle`` when a
teammate is about to go idle (a block sends it back to work). Who calls them is above this
layer: the task tools, and the ``after_stop`` check a teammate's lifecycle installs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Awaitable, Callable

from covey.hooks.dispatch import HookDispatch
from covey.hooks.outcomes import HookOutcome, combine

AfterStop = Callable[[str], Awaitable[HookOutcome]]
"""``(agent_id) -> outcome``: what runs once an agent's Stop hooks let it stop."""


class TeamEvents(HookDispatch):
    """The team's events, fired one at a time (a ``HookRegistry`` is one)."""

    after_stop: AfterStop | None = None
    """A teammate's turn-end hooks (its tasks' TaskCompleted, then TeammateIdle): ``run_stop``
    runs it when the Stop / SubagentStop hooks neither blocked nor stopped."""

    async def run_task_created(
        self, agent_id: str, task_id: str, subject: str, description: str | None = None, *,
        teammate_name: str | None = None, team_name: str | None = None, cwd: Path | str | None = None,
    ) -> HookOutcome:
        """``blocked``: the task must not exist; ``reason`` is the tool's error. Claude Code
        ignores ``continue: false`` here, so the outcome never carries ``stop``."""
        fields = _task_fields(task_id, subject, description, teammate_name, team_name)
        outcome = combine("TaskCreated", await self._run("TaskCreated", agent_id, None, fields, cwd=cwd))
        return HookOutcome(blocked=outcome.blocked, reason=outcome.reason)

    async def run_task_completed(
        self, agent_id: str, task_id: str, subject: str, description: str | None = None, *,
        teammate_name: str | None = None, team_name: str | None = None, cwd: Path | str | None = None,
    ) -> HookOutcome:
        """``blocked``: the task stays open, ``reason`` goes back to the model. ``stop``
        (``continue: false``) counts only at a teammate's turn end; TaskUpdate ignores it."""
        fields = _task_fields(task_id, subject, description, teammate_name, team_name)
        return combine("TaskCompleted", await self._run("TaskCompleted", agent_id, None, fields, cwd=cwd))

    async def run_teammate_idle(
        self, agent_id: str, teammate_name: str, team_name: str | None, *, cwd: Path | str | None = None,
    ) -> HookOutcome:
        """``blocked``: the teammate keeps working with ``reason``; ``stop``: it stops for good."""
        fields = {"teammate_name": teammate_name, "team_name": team_name}
        return combine("TeammateIdle", await self._run("TeammateIdle", agent_id, None, fields, cwd=cwd))


def _task_fields(
    task_id: str, subject: str, description: str | None, teammate_name: str | None, team_name: str | None,
) -> dict[str, Any]:
    """Claude Code's fields; those it says "may be absent" are left out when covey has none."""
    fields: dict[str, Any] = {"task_id": task_id, "task_subject": subject}
    optional = {"task_description": description, "teammate_name": teammate_name, "team_name": team_name}
    return {**fields, **{key: value for key, value in optional.items() if value}}


def feedback(event: str, outcome: HookOutcome) -> str:
    """A block's reason as Claude Code hands it to the model (``TeammateIdle hook feedback:`` ...)."""
    return f"{event} hook feedback:\n{outcome.reason or f'A {event} hook blocked this.'}"
