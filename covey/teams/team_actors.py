"""A team's roster and task board as Ray actors (one each per team), and their handles.

The shells add nothing to the plain cores: the board's claim is serialised by
the core's lock inside the actor's single event loop, not by anything here.
"""

from __future__ import annotations

import builtins
from typing import Any

from ray.actor import ActorClass
from pydantic import ValidationError

from covey.ray.handle import TypedHandle, actor_class
from covey.teams.board import TaskBoard
from covey.teams.roster import Backend, Member, RosterError, TeamRoster
from covey.teams.tasks import ClaimResult, Task, TaskPatch, UpdateError, UpdateResult


class _RosterActor(TeamRoster):
    """Ray shell: the roster's async methods are the actor's methods."""


class _BoardActor(TaskBoard):
    """Ray shell: the board's async methods are the actor's methods."""


def roster_actor_class(**options: Any) -> ActorClass[_RosterActor]:
    cls: ActorClass[_RosterActor] = actor_class(_RosterActor, **options)
    return cls


def board_actor_class(**options: Any) -> ActorClass[_BoardActor]:
    cls: ActorClass[_BoardActor] = actor_class(_BoardActor, **options)
    return cls


class RosterHandle(TypedHandle[_RosterActor]):
    async def add(
        self, name: str, agent_id: str, *, agent_type: str,
        backend: Backend = "actor", color: str | None = None,
    ) -> Member | RosterError:
        return await self._call(self.remote.add, name, agent_id, agent_type=agent_type, backend=backend, color=color)

    async def remove(self, name_or_id: str) -> Member | None:
        return await self._call(self.remote.remove, name_or_id)

    async def resolve(self, name_or_id: str) -> Member | None:
        return await self._call(self.remote.resolve, name_or_id)

    async def members(self) -> list[Member]:
        return await self._call(self.remote.members)

    async def lead_id(self) -> str | None:
        return await self._call(self.remote.lead_id)


class BoardHandle(TypedHandle[_BoardActor]):
    async def create(
        self, subject: str, description: str, active_form: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Task:
        return await self._call(self.remote.create, subject, description, active_form, metadata)

    async def get(self, task_id: str) -> Task | None:
        return await self._call(self.remote.get, task_id)

    async def list(self) -> builtins.list[Task]:
        return await self._call(self.remote.list)

    async def update(self, task_id: str, patch: TaskPatch | dict[str, Any]) -> UpdateResult:
        # Checked here first: a malformed patch never costs a round trip.
        try:
            patch = TaskPatch.model_validate(patch, from_attributes=True)
        except ValidationError as exc:
            return UpdateError(reason="invalid_patch", task_id=task_id, message=str(exc))
        return await self._call(self.remote.update, task_id, patch)

    async def claim(self, task_id: str, owner: str, *, check_busy: bool = True) -> ClaimResult:
        return await self._call(self.remote.claim, task_id, owner, check_busy=check_busy)

    async def claim_next(self, owner: str, *, check_busy: bool = True) -> ClaimResult:
        return await self._call(self.remote.claim_next, owner, check_busy=check_busy)

    async def release_owner(self, owner: str) -> builtins.list[Task]:
        return await self._call(self.remote.release_owner, owner)

    async def blocked(self, task: Task | str) -> builtins.list[str]:
        return await self._call(self.remote.blocked, task if isinstance(task, str) else task.id)


def start_team_actors(team_name: str, *, lead_id: str | None = None,
                      session_id: str | None = None) -> tuple[RosterHandle, BoardHandle]:
    """A fresh roster + board pair; named ``<session>/team/<name>/...`` when a session id is given,
    so two sessions on one cluster never meet (docs/architecture.md)."""
    prefix = f"{session_id}/team/{team_name}" if session_id else None
    roster_opts = {"name": f"{prefix}/roster"} if prefix else {}
    board_opts = {"name": f"{prefix}/board"} if prefix else {}
    roster = roster_actor_class().options(**roster_opts).remote(team_name, lead_id)
    board = board_actor_class().options(**board_opts).remote()
    return RosterHandle(roster, f"roster {team_name!r}"), BoardHandle(board, f"board {team_name!r}")
