"""One team's members (docs/teams.md), as plain Python; the Ray actor wraps one of these.

Methods are async so that the in-memory roster and a Ray handle share one
protocol; none of them awaits, so each runs as one step of the event loop.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field

PALETTE = ("blue", "green", "yellow", "purple", "orange", "pink", "cyan", "red")
"""Member colours, handed out in this order (then around again)."""

Backend = Literal["actor", "process"]


class Member(BaseModel):
    """A teammate: addressable by ``name`` (unique in the team) or by ``agent_id``."""

    kind: Literal["member"] = "member"
    name: str
    agent_id: str
    agent_type: str
    backend: Backend = "actor"
    """``actor``: an AgentActor in this Ray cluster; ``process``: a separate OS process."""
    color: str
    joined_at: float = Field(default_factory=time.time)


class RosterError(BaseModel):
    """Why a member was not added; nothing changed."""

    kind: Literal["error"] = "error"
    reason: Literal["duplicate_name", "duplicate_agent_id", "invalid_name"]
    message: str


class TeamRoster:
    def __init__(self, team_name: str, lead_id: str | None = None) -> None:
        self.team_name = team_name
        self._lead_id = lead_id
        self._members: dict[str, Member] = {}  # by name, in joining order
        self._colors_given = 0

    async def add(
        self, name: str, agent_id: str, *, agent_type: str,
        backend: Backend = "actor", color: str | None = None,
    ) -> Member | RosterError:
        refusal = self._refusal(name, agent_id)
        if refusal:
            return refusal
        if color is None:
            color = PALETTE[self._colors_given % len(PALETTE)]
            self._colors_given += 1
        member = Member(name=name, agent_id=agent_id, agent_type=agent_type, backend=backend, color=color)
        self._members[name] = member
        return member

    async def remove(self, name_or_id: str) -> Member | None:
        member = self._find(name_or_id)
        if member:
            del self._members[member.name]
        return member

    async def resolve(self, name_or_id: str) -> Member | None:
        """By name first, then by agent id (a name may look like an id; names win)."""
        return self._find(name_or_id)

    async def members(self) -> list[Member]:
        return list(self._members.values())

    async def lead_id(self) -> str | None:
        return self._lead_id

    def _find(self, name_or_id: str) -> Member | None:
        if name_or_id in self._members:
            return self._members[name_or_id]
        return next((m for m in self._members.values() if m.agent_id == name_or_id), None)

    def _refusal(self, name: str, agent_id: str) -> RosterError | None:
        # "*" addresses the whole team in SendMessage, so no member may be called that.
        if not name.strip() or name == "*" or any(c in name for c in "\r\n"):
            return RosterError(reason="invalid_name", message=f"invalid teammate name {name!r}")
        if name in self._members:
            return RosterError(
                reason="duplicate_name",
                message=f"team {self.team_name!r} already has a member named {name!r}",
            )
        if any(m.agent_id == agent_id for m in self._members.values()):
            return RosterError(
                reason="duplicate_agent_id",
                message=f"agent {agent_id!r} is already a member of team {self.team_name!r}",
            )
        return None
