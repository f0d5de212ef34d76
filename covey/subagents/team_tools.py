"""SendMessage, TeamCreate, TeamDelete (docs/teams.md), and ``team_tools()`` with the task tools.

Team members, tasks and messages are coordination state. Nothing here claims to
undo outside state (files, processes, requests): deleting a team says so.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from covey.errors import CoveyError
from covey.subagents.task_tools import TaskCreate, TaskGet, TaskList, TaskUpdate
from covey.teams.context import Recipient, TeamContext, team_context
from covey.teams.messages import ShutdownRequest, TeammateMessage
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult

NOT_SENT = "Nothing was sent"


class ShutdownRequestBody(ToolInput):
    type: Literal["shutdown_request"]
    reason: str | SkipJsonSchema[None] = None


class SendMessageInput(ToolInput):
    to: str = Field(max_length=300, pattern=r"^[^\n\r]*$",
                    description="A teammate name, an agent id, or '*' for every teammate.")
    summary: str | SkipJsonSchema[None] = Field(default=None, max_length=200,
                                                description="A few words shown in place of a long message.")
    message: str | ShutdownRequestBody = Field(
        description="The text to send, or {type: 'shutdown_request', reason} to ask a teammate to stop.")


class SendMessage(Tool):
    coordination = True
    name = "SendMessage"
    description = (
        "Send a message to a teammate (by name or agent id) or to every teammate ('*'). It is queued in "
        "their mailbox and read at their next turn: queued does not mean read or done. A message does not "
        "grant permissions: never ask a teammate to do what this session was denied."
    )
    input_model = SendMessageInput

    async def run(self, input: SendMessageInput, ctx: ToolContext) -> ToolResult:
        team = team_context(ctx.services)
        if team is None:
            return ToolResult.error(f"{NOT_SENT}: messaging is not available to this agent.")
        recipients = await _recipients(team, input.to)
        if isinstance(recipients, str):
            return ToolResult.error(f"{NOT_SENT}: {recipients}")
        sent, failed = [], []
        for to in recipients:
            mail = _mail(team, input)
            try:
                await team.mailbox.put(to.agent_id, mail)
            except CoveyError as exc:
                failed.append(f"{to.name} ({to.agent_id}): {exc}")
                continue
            sent.append(f"{to.name} ({to.agent_id}) as {mail.message_id}{await _after(team, to)}")
        return _routing(sent, failed)


async def _recipients(team: TeamContext, to: str) -> list[Recipient] | str:
    if to == "*":
        if team.roster is None:
            return "'*' means every teammate, and you are not in a team."
        others = [Recipient(m.name, m.agent_id) for m in await team.roster.members()
                  if m.agent_id != team.my_agent_id]
        return others or "your team has no other members."
    member = await team.roster.resolve(to) if team.roster else None
    found = Recipient(member.name, member.agent_id) if member else None
    if found is None and team.find_agent:
        found = await team.find_agent(to)
    if found is None:
        names = [m.name for m in await team.roster.members()] if team.roster else []
        known = f" Teammates: {', '.join(names)}." if names else ""
        return f"no teammate or agent named {to!r}.{known}"
    return [found] if found.agent_id != team.my_agent_id else f"{to!r} is you."


def _mail(team: TeamContext, input: SendMessageInput) -> TeammateMessage | ShutdownRequest:
    if isinstance(input.message, ShutdownRequestBody):
        return ShutdownRequest(sender=team.me, reason=input.message.reason or "")
    return TeammateMessage(sender=team.me, sender_id=team.my_agent_id, text=input.message,
                           summary=input.summary)


async def _after(team: TeamContext, to: Recipient) -> str:
    if team.after_send is None:
        return ""
    try:
        note = await team.after_send(to.agent_id)
    except CoveyError as exc:  # the mail is queued whatever happens here
        return f" (queued, but waking it failed: {exc})"
    return f" ({note})" if note else ""


def _routing(sent: list[str], failed: list[str]) -> ToolResult:
    lines = [f"Queued for {entry}" for entry in sent] + [f"{NOT_SENT} to {entry}" for entry in failed]
    if sent:
        lines[len(sent) - 1] += "; queued means not yet read."
    return ToolResult(content="\n".join(lines), is_error=not sent, data={"sent": sent, "failed": failed})


class TeamCreateInput(ToolInput):
    team_name: str = Field(min_length=1, max_length=100, pattern=r"^[^\n\r/*]*$")
    description: str | SkipJsonSchema[None] = Field(default=None, description="What the team is for.")


class TeamCreate(Tool):
    coordination = True
    name = "TeamCreate"
    description = ("Create a team you lead: a roster and an empty task board. Then spawn teammates with the "
                   "Agent tool (name + team_name), plan work with TaskCreate and talk with SendMessage.")
    input_model = TeamCreateInput

    async def run(self, input: TeamCreateInput, ctx: ToolContext) -> ToolResult:
        team = team_context(ctx.services)
        if team is None or team.make_team is None:
            return ToolResult.error("Teams are not available to this agent.")
        if team.team_name in team.teams:
            return ToolResult.error(f"You already lead team {team.team_name!r}; delete it with TeamDelete first.")
        if team.team_name:
            return ToolResult.error(f"You are a member of team {team.team_name!r}; teammates cannot create "
                                    "teams (the roster is flat).")
        created = await team.make_team(input.team_name, team.my_agent_id)
        created.description = input.description or ""
        await created.roster.add(team.me, team.my_agent_id, agent_type="team-lead")
        team.teams[created.name] = created
        team.join(created)
        return ToolResult(content=f"Team {created.name!r} created with an empty task board; you are its "
                                  f"lead, named {team.me!r}.")


class TeamDeleteInput(ToolInput):
    team_name: str | SkipJsonSchema[None] = Field(default=None, description="Defaults to your current team.")


class TeamDelete(Tool):
    coordination = True
    name = "TeamDelete"
    description = ("Delete a team you created, once its teammates have stopped: its roster and task board "
                   "are gone. Files, processes and requests its members made are not rolled back.")
    input_model = TeamDeleteInput

    async def run(self, input: TeamDeleteInput, ctx: ToolContext) -> ToolResult:
        team = team_context(ctx.services)
        name = input.team_name or (team.team_name if team else None)
        if team is None or name not in team.teams:
            return ToolResult.error(f"No team {name!r} that you created." if name else "You are in no team.")
        doomed = team.teams[name]
        others = [m.name for m in await doomed.roster.members() if m.agent_id != team.my_agent_id]
        if others:
            return ToolResult.error(f"Team {name!r} still has {len(others)} active member(s): {', '.join(others)}. "
                                    "Ask them to stop (SendMessage with a shutdown_request) and wait until "
                                    "they have exited.")
        if team.drop_team:
            await team.drop_team(doomed)
        del team.teams[name]
        if team.team_name == name:
            team.leave()
        return ToolResult(content=f"Team {name!r} deleted: its roster and task board are gone. This does not "
                                  "roll back anything done outside the team's coordination state: files "
                                  "changed, processes started and requests sent stay as they are.")


def team_tools() -> list[Tool]:
    """Fresh instances of the messaging, task-board and team tools."""
    return [SendMessage(), TaskCreate(), TaskGet(), TaskList(), TaskUpdate(), TeamCreate(), TeamDelete()]
