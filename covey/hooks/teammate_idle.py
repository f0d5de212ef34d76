"""A teammate's turn end, as Claude Code checks it once the Stop hooks let it stop: the
``TaskCompleted`` hooks of each task it holds in progress, then the ``TeammateIdle`` hooks.

A block from either sends the teammate back to work with every hook's feedback; a
``continue: false`` from either stops it for good (that wins over a block). The tasks
themselves are not changed here: TaskUpdate is what completes a task.
"""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator

from covey.hooks.outcomes import HookOutcome
from covey.hooks.team_events import AfterStop, TeamEvents, feedback
from covey.teams.context import TeamContext


def teammate_turn_end(hooks: TeamEvents, team: TeamContext, *, cwd: Path | str | None = None) -> AfterStop:
    """The ``after_stop`` check of the teammate ``team.me`` (its board is ``team.board``)."""

    async def check(agent_id: str) -> HookOutcome:
        outcomes = [(event, outcome) async for event, outcome in _hooks_of(hooks, team, agent_id, cwd)]
        stopped = [outcome for _, outcome in outcomes if outcome.stop]
        if stopped:
            return HookOutcome(stop=True, stop_reason=stopped[0].stop_reason or "A teammate hook stopped the run.")
        blocks = [feedback(event, outcome) for event, outcome in outcomes if outcome.blocked]
        return HookOutcome(blocked=bool(blocks), reason="\n".join(blocks) or None)

    return check


async def _hooks_of(
    hooks: TeamEvents, team: TeamContext, agent_id: str, cwd: Path | str | None,
) -> AsyncIterator[tuple[str, HookOutcome]]:
    tasks = await team.board.list() if team.board is not None else []
    for task in tasks:
        if task.status == "in_progress" and task.owner == team.me:
            yield "TaskCompleted", await hooks.run_task_completed(
                agent_id, task.id, task.subject, task.description, teammate_name=team.me,
                team_name=team.team_name, cwd=cwd)
    yield "TeammateIdle", await hooks.run_teammate_idle(agent_id, team.me, team.team_name, cwd=cwd)
