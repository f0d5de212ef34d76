"""One Agent call from its reservation to its result: the child's spec, the registry's launch, then the launch (background)
or the followed child's report (sync, moved to the background past the threshold); where its actor runs (``placement_lane``).

A failed check or start leaves nothing behind: no worktree, no roster seat (docs/subagents.md#the-call).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from covey.definitions.coordinator import WORKER_TYPE
from covey.errors import AgentUnavailable, ModelBehaviorError
from covey.runtime.spec import AgentSpec, TeamSeat
from covey.runtime.worktree import Worktree, check_isolation
from covey.runtime.worktree_hooks import discard_worktree, hooks_make_worktrees, make_worktree
from covey.subagents.children import child_spec
from covey.subagents.fork import FORK_AGENT, FORK_TYPE, fork_spec
from covey.subagents.reports import SUMMARIES, completed_text, launched_text
from covey.teams.context import team_handles
from covey.transcripts.transcript import agent_transcript
from covey.events import (
    AssistantEvent, BackgroundTask, CompactBoundary, ResultEvent, TaskNotification, TaskStarted, TaskUpdated, TaskUsage,
    UserEvent, new_uuid, wire_usage,
)
from covey.common.tool_names import canonical_tool_name
from covey.definitions.tool_catalog import tool_names_where
from covey.ids import AgentId, shown_agent_id
from covey.runtime.records import FinalReport, LaunchRequest
from covey.subagents.agent_schema import AsyncLaunched, Completed, TeammateSpawned
from covey.teams.roster import Member
from covey.tools.base import ToolContext, ToolResult


def default_agent_type(runtime: Any) -> str:
    """The type of a call that names none: ``worker`` in coordinator mode, else ``general-purpose``."""
    return WORKER_TYPE if getattr(runtime, "coordinator", False) else "general-purpose"


class Launch:
    """One Agent call from reservation to its result."""

    def __init__(self, call: Any, ctx: ToolContext, parent: Any, runtime: Any, *, fork: bool = False) -> None:
        self.call, self.ctx, self.parent, self.runtime = call, ctx, parent, runtime
        self.fork = fork
        self.agent_type = FORK_TYPE if fork else call.subagent_type or default_agent_type(runtime)
        self.definition = FORK_AGENT if fork else runtime.definitions.get(self.agent_type)
        self.agent_id = AgentId.new()
        self.run_id = f"run-{new_uuid()[:13]}"
        """Claude Code's ``run_id`` of the task (this run of it), in its task events."""
        self.member = getattr(call, "name", None) if getattr(call, "team_name", None) else None
        # Teammates always run in the background: the lead keeps working while they do; so does
        # every spawn in coordinator mode (docs/coordinator.md).
        self.background = bool(self.member) or bool(getattr(call, "run_in_background", None)) or bool(
            self.definition and self.definition.background
        ) or runtime.coordinator
        if runtime.tools.fork:  # forking on: every spawn is async (run_in_background left the schema)
            self.background = True

    async def go(self) -> ToolResult:
        if self.member:
            return await self._spawn_teammate(self.member)
        isolation = self.call.isolation or (self.definition.isolation if self.definition else None)
        hooks = self.ctx.services.hooks
        self.place_problem = await asyncio.to_thread(
            check_isolation, cwd=self.call.cwd, isolation=isolation, base_cwd=self.parent.cwd,
            hooked=hooks_make_worktrees(hooks, self.parent.agent_id),
        )
        worktree = None
        if isolation == "worktree" and self.place_problem is None and self.definition is not None:
            worktree = await make_worktree(hooks, self.parent, self.agent_id)  # git's, or WorktreeCreate hooks'
        try:
            return await self._launch(worktree)
        except BaseException:
            if worktree is not None:  # a refused or failed launch leaves no worktree behind
                await discard_worktree(worktree, hooks, self.parent.agent_id)
            raise

    async def _launch(self, worktree: Worktree | None) -> ToolResult:
        spec = spec.model_copy(update={"run_id": self.run_id}) if (spec := await self._spec(worktree)) else None
        self.output_file = str(agent_transcript(spec)) if spec else None
        launched = await self.runtime.registry.launch(
            self._request(spec), spec, follow=not self.background, output_file=self.output_file,
            lane=placement_lane(spec, self.runtime),
        )
        # The registry refuses a type with no definition, so a launch that went through has a spec.
        assert spec is not None, "the registry launched an agent of an unknown type"
        if self.background:
            self._note_background()
        self._emit(TaskStarted(
            session_id=spec.session_id, agent_id=self.parent.agent_id, task_id=self.agent_id, run_id=self.run_id,
            tool_use_id=self.ctx.tool_use_id, description=self.call.description, subagent_type=self.agent_type,
            is_backgrounded=self.background, spawn_depth=self.parent.depth + 1, prompt=self.call.prompt,
        ))
        if self.background:
            return self._launched(spec, queued_for=launched.record.queued_for if launched.record.queued else None)
        if self.runtime.child_events:  # a sync child's prompt, as Claude Code prints it: a user message
            self._emit(self._labelled(UserEvent(session_id=spec.session_id, agent_id=self.agent_id,
                                                parent_tool_use_id=self.ctx.tool_use_id,
                                                message={"role": "user", "content": [{"type": "text", "text": self.call.prompt}]})))
        return await self._follow(launched.actor, spec)

    async def _spec(self, worktree: Worktree | None) -> AgentSpec | None:
        """The child's spec; None for a type with no definition (the registry refuses it, naming the type)."""
        if self.fork:
            cache_safe = self.ctx.services.cache_safe
            if cache_safe is None:  # AgentTool.run refuses a fork without it; a Launch built elsewhere must too
                raise ModelBehaviorError("Forking needs the calling agent's conversation, which is not available here.")
            return fork_spec(self.parent, cache_safe(), self.call, agent_id=self.agent_id,
                             tool_use_id=self.ctx.tool_use_id, worktree=worktree)
        if self.definition is None:
            return None
        return await child_spec(
            self.parent, self.definition, self.call, agent_id=self.agent_id, tool_use_id=self.ctx.tool_use_id,
            background=self.background, available_tools=self.runtime.tool_names,
            cwd=worktree.cwd if worktree else None, worktree=worktree,
        )

    async def _spawn_teammate(self, member: str) -> ToolResult:
        """Route 1 (docs/subagents.md#the-call): a named agent joins a team, registered in its roster."""
        team = team_handles(self.ctx.services.team, self.call.team_name)
        if team is None:
            raise ModelBehaviorError(f"No team {self.call.team_name!r} here: create it with TeamCreate first.")
        added = await team.roster.add(member, self.agent_id, agent_type=self.agent_type, backend="actor")
        if not isinstance(added, Member):
            raise ModelBehaviorError(f"Teammate {member!r} was not spawned: {added.message}")
        try:
            spec = None
            if self.definition is not None:
                spec = await child_spec(
                    self.parent, self.definition, self.call, agent_id=self.agent_id, tool_use_id=self.ctx.tool_use_id,
                    background=True, available_tools=self.runtime.tool_names,
                )
                seat = TeamSeat(name=team.name, member=member, roster=team.roster, board=team.board)
                spec = spec.model_copy(update={"team": seat})
            output_file = str(agent_transcript(spec)) if spec else None
            launched = await self.runtime.registry.launch(
                self._request(spec), spec, output_file=output_file, lane=placement_lane(spec, self.runtime),
            )
        except BaseException:
            await team.roster.remove(self.agent_id)
            raise
        self._note_background()
        output = TeammateSpawned(agentId=self.agent_id, name=member, team_name=team.name, color=added.color)
        text = (f"Teammate {member!r} ({self.agent_id}) joined team {team.name!r} and is working in the "
                "background. It claims pending tasks from the team's board; message it with SendMessage.")
        if launched.record.queued:
            text += f"\n{QUEUED_NOTES[launched.record.queued_for or 'concurrency']}"
        return ToolResult(content=text, data=output)

    def _request(self, spec: Any) -> LaunchRequest:
        return LaunchRequest(
            agent_id=self.agent_id, parent_agent_id=self.parent.agent_id, depth=self.parent.depth + 1,
            description=self.call.description, prompt=self.call.prompt, agent_type=self.agent_type,
            model=spec.model_id if spec else "", tool_use_id=self.ctx.tool_use_id,
            cwd=spec.cwd if spec else self.parent.cwd, background=self.background,
            type_known=self.definition is not None, denied_by=self._denied_by(),
            worktree_with_cwd=bool(self.call.cwd and self.call.isolation == "worktree"),
            cwd_problem=getattr(self, "place_problem", None),
            spawns_teammate=bool(self.member), team_name=getattr(self.call, "team_name", None),
            member_name=self.member or getattr(self.call, "name", None),
        )

    def _denied_by(self) -> tuple[str, str] | None:
        policy = self.parent.permissions
        if policy is None:
            return None
        for rule in policy.rules["deny"]:
            if canonical_tool_name(rule.tool) == "Agent" and rule.matches("Agent", self.agent_type, policy.where, allowing=False):
                return rule.text, rule.source
        return None

    def _launched(self, spec: Any, queued_for: str | None = None) -> ToolResult:
        """The ``async_launched`` answer; a queued launch (docs/subagents.md#queued-spawns) answers the same, and says so."""
        output = AsyncLaunched(
            agentId=shown_agent_id(self.agent_id), description=self.call.description, prompt=self.call.prompt,
            resolvedModel=spec.model_id, outputFile=self.output_file,
        )
        text = launched_text(self.agent_id, self.call.description, self.output_file, can_continue=self._can_continue())
        if queued_for:
            text += f"\n{QUEUED_NOTES[queued_for]}"
        return ToolResult(content=text, data=output)

    async def _follow(self, actor: Any, spec: Any) -> ToolResult:
        pump = asyncio.create_task(self._pump(actor))
        threshold_s = self.runtime.limits.auto_background_ms / 1000
        try:
            await asyncio.wait_for(asyncio.shield(pump), threshold_s)
        except asyncio.TimeoutError:
            if await self.runtime.registry.to_background(self.agent_id):
                pump.cancel()
                await actor.detach()
                self._note_background()
                return self._launched(spec)
            await pump
        except asyncio.CancelledError:
            # A sync child shares its parent's abort: cancelling the parent cancels it.
            pump.cancel()
            await asyncio.shield(self.runtime.registry.kill_agent(self.agent_id, "its parent was cancelled"))
            raise
        except AgentUnavailable:
            pass
        return await self._completed(pump, spec)

    async def _pump(self, actor: Any) -> FinalReport | None:
        """Forward the child's events; its stream ends with its report.

        A child's ``result`` is not forwarded: Claude Code prints none for a sub-agent (a
        reader such as claude-agent-sdk's ``receive_response()`` would end on it); its
        report comes back as this call's result instead."""
        async for event in actor.follow(self.agent_id):
            if isinstance(event, FinalReport):
                return event
            if isinstance(event, (ResultEvent, CompactBoundary)):
                continue  # a child's compaction is its own: its transcript records it
            self._emit(self._labelled(event))
        return None

    def _labelled(self, event: Any) -> Any:
        """A child's message carries its type and task, as Claude Code's do (a grandchild's keeps its own)."""
        if isinstance(event, (AssistantEvent, UserEvent)) and event.subagent_type is None:
            return event.model_copy(update={"subagent_type": self.agent_type, "task_description": self.call.description})
        return event

    async def _completed(self, pump: asyncio.Task[Any], spec: Any) -> ToolResult:
        try:
            report = pump.result()
        except AgentUnavailable as exc:
            # The stream broke, but the run may have ended first: the registry records
            # every run's report before its actor is recycled or killed.
            report = await self.runtime.registry.report_of(self.agent_id)
            if report is None:
                return ToolResult.error(f"The sub-agent {self.agent_id} failed: its actor died ({exc}).")
        if report is None:
            return ToolResult.error(f"The sub-agent {self.agent_id} ended without a report.")
        output = Completed(
            agentId=shown_agent_id(self.agent_id), content=report.text, totalTokens=report.usage.total,
            totalToolUseCount=report.tool_uses, totalDurationMs=report.duration_ms,
            resolvedModel=spec.model_id, worktree=report.worktree, prompt=self.call.prompt,
            agentType=self.agent_type, usage=wire_usage(report.usage.model_dump()),
        )
        self._emit_ended(report, spec)
        one_shot = bool(self.definition and self.definition.one_shot)
        text = completed_text(self.agent_id, report, one_shot=one_shot, can_continue=self._can_continue())
        return ToolResult(content=text, is_error=report.status != "completed", data=output)

    def _emit_ended(self, report: FinalReport, spec: Any) -> None:
        """A sync child's end, as Claude Code reports a task's: ``task_updated``, then ``task_notification``."""
        common = dict(session_id=spec.session_id, agent_id=self.parent.agent_id, task_id=self.agent_id,
                      run_id=self.run_id)
        self._emit(TaskUpdated(**common, patch={"status": report.status, "end_time": int(time.time() * 1000)}))
        summary = report.text if report.status == "completed" else f'Agent "{self.call.description}" {SUMMARIES.get(report.status, report.status)}'
        self._emit(TaskNotification(
            **common, tool_use_id=self.ctx.tool_use_id, status=report.status, output_file=self.output_file,
            summary=summary, usage=TaskUsage(total_tokens=report.usage.total, tool_uses=report.tool_uses,
                                             duration_ms=report.duration_ms),
        ))

    def _note_background(self) -> None:
        """Tell this agent's inbox it now owns work that will notify it (it must wait at its end)."""
        inbox = self.ctx.services.inbox
        if inbox is not None and hasattr(inbox, "note_launch"):
            inbox.note_launch(BackgroundTask(
                task_id=self.agent_id, run_id=self.run_id, subagent_type=self.agent_type,
                description=self.call.description,
            ), tool_use_id=self.ctx.tool_use_id)

    def _can_continue(self) -> bool:
        """Whether the caller has ``SendMessage`` to continue the child with."""
        return "SendMessage" in (getattr(self.parent, "tool_names", None) or ())

    def _emit(self, event: Any) -> None:
        if self.ctx.emit is not None:
            self.ctx.emit(event)


QUEUED_NOTES = {
    "concurrency": "queued: the session's concurrency limit of running agents is reached, so it waits and starts when "
                   "one of them ends, in launch order. Its notification arrives as any other's; do not launch it again.",
    "active": "queued: as many background agents are at work as this machine runs well at once, so it waits and "
              "starts when one of them ends or waits, in launch order. Its notification arrives as any other's; "
              "do not launch it again.",
}
"""The line a queued launch's answer adds, by why it waits (``RunRecord.queued_for``)."""
QUEUED_NOTE = QUEUED_NOTES["concurrency"]

FILE_TOOLS = tool_names_where(lambda tool: tool.touches_files)  # they run where the files are


def placement_lane(spec: Any, runtime: Any) -> str:
    """Where the child's actor runs (docs/architecture.md): asking for resources, a lane of its own that Ray places; with
    file tools, the node of the working tree ("home") unless the filesystem is shared; else any node in turn ("any")."""
    if spec is not None and spec.definition.resources is not None:
        return str(spec.definition.resources.lane())
    if not runtime.spread:
        return "home"  # one node: every agent is where the files are
    if spec is None or runtime.shared_fs:
        return "any"
    return "home" if FILE_TOOLS & set(spec.tool_names) else "any"
