"""An agent's ``TeamContext`` in a session: its mailbox, its team, and how teams are made.

The lead creates teams (a roster and a task board actor each, named by
session); a teammate's spec carries its team's handles, so it joins on start.
"""

from __future__ import annotations


from covey.definitions.coordinator import COORDINATOR_NAME
from covey.ray.handle import TypedHandle
from covey.runtime.spec import AgentSpec
from covey.teams.context import Recipient, Team, TeamContext
from covey.teams.team_actors import start_team_actors

LEAD_NAME = "team-lead"


def team_context_for(spec: AgentSpec) -> TeamContext | None:
    runtime = spec.runtime
    if runtime is None or not runtime.messaging:
        return None
    team = spec.team

    async def make_team(name: str, lead_id: str) -> Team:
        roster, board = start_team_actors(name, lead_id=lead_id, session_id=spec.session_id[:8])
        return Team(name=name, roster=roster, board=board)

    async def drop_team(doomed: Team) -> None:
        for backend in (doomed.roster, doomed.board):  # actors this session made (``make_team``)
            if isinstance(backend, TypedHandle):
                backend.kill()

    async def find_agent(name_or_id: str) -> Recipient | None:
        record = await runtime.registry.find(name_or_id)
        if record is None:
            return None
        return Recipient(name=record.member_name or record.agent_id, agent_id=record.agent_id)

    async def after_send(agent_id: str) -> str | None:
        note: str | None = await runtime.registry.resume(agent_id)
        return note

    context = TeamContext(
        mailbox=runtime.mailbox, me=_my_name(spec), my_agent_id=spec.agent_id,
        make_team=make_team, drop_team=drop_team, find_agent=find_agent, after_send=after_send,
    )
    if team is not None:
        context.join(Team(name=team.name, roster=team.roster, board=team.board))
    return context


def _my_name(spec: AgentSpec) -> str:
    """Who this agent's messages are from: a teammate's name; with teams, ``team-lead`` for the
    others; in coordinator mode (no teams) ``coordinator`` for the main agent, else its type."""
    if spec.team is not None:
        return spec.team.member
    if spec.runtime.teams or not spec.runtime.coordinator:
        return LEAD_NAME
    return COORDINATOR_NAME if spec.depth == 0 else spec.definition.name

