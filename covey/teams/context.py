"""What the team tools find in ``ctx.services.team``: this agent's place in a team.

The backends are protocol objects: in-memory cores in tests and
single-process use, Ray handles in a session. TeamCreate and TeamDelete reach
the outside world only through the injected ``make_team`` / ``drop_team`` hooks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from covey.teams.board import TaskBoard
from covey.teams.ports import BoardProtocol, MailboxProtocol, RosterProtocol
from covey.teams.roster import TeamRoster


@dataclass
class Team:
    name: str
    roster: RosterProtocol
    board: BoardProtocol
    description: str = ""


@dataclass(frozen=True)
class Recipient:
    """An addressable agent outside the roster (a named sub-agent the registry knows)."""

    name: str
    agent_id: str


TeamFactory = Callable[[str, str], Awaitable[Team]]
"""(team name, lead's agent id) -> a fresh roster + board pair."""


@dataclass
class TeamContext:
    mailbox: MailboxProtocol
    """Keyed by recipient agent id."""
    me: str
    """This agent's name: its teammate name, or ``team-lead`` for the lead."""
    my_agent_id: str
    team_name: str | None = None
    roster: RosterProtocol | None = None
    board: BoardProtocol | None = None
    teams: dict[str, Team] = field(default_factory=dict)
    """Teams this agent created, by name (TeamCreate adds, TeamDelete removes)."""
    make_team: TeamFactory | None = None
    drop_team: Callable[[Team], Awaitable[None]] | None = None
    """Releases a deleted team's backends (kills its actors); optional."""
    find_agent: Callable[[str], Awaitable[Recipient | None]] | None = None
    """Looks up a name or agent id that is not on the roster; optional."""
    after_send: Callable[[str], Awaitable[str | None]] | None = None
    """Called with each recipient's agent id once mail is queued (e.g. resumes a completed
    named agent, docs/subagents.md#what-the-parent-gets-back); may return a note for the routing summary."""

    def join(self, team: Team) -> None:
        self.team_name, self.roster, self.board = team.name, team.roster, team.board

    def leave(self) -> None:
        self.team_name, self.roster, self.board = None, None, None


async def in_memory_team(name: str, lead_id: str) -> Team:
    """A ``TeamFactory`` for tests and single-process use."""
    return Team(name=name, roster=TeamRoster(name, lead_id), board=TaskBoard())


def team_context(services: Any) -> TeamContext | None:
    """The agent's ``TeamContext`` from ``ctx.services``, if the runtime gave it one."""
    found = services.team
    return found if isinstance(found, TeamContext) else None


def team_handles(context: TeamContext | None, team_name: str) -> Team | None:
    """The team a lead may spawn into: one it created, or the one it is in."""
    if context is None:
        return None
    if team_name in context.teams:
        return context.teams[team_name]
    if context.team_name == team_name and context.roster is not None and context.board is not None:
        return Team(name=team_name, roster=context.roster, board=context.board)
    return None
