"""The ``Agent`` tool: route the call, reserve a slot, start a pooled actor, return a launch or a result.

Routing (docs/subagents.md#the-call) happens here, before any agent exists; the registry runs
the launch checks atomically (docs/subagents.md#limits-the-registry-actor); a failed check or start leaves nothing
behind. Sync children are followed (their events stream into the parent's)
and moved to the background if they run past the threshold.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, ClassVar

from covey.agents.children import child_spec
from covey.agents.coordinator import WORKER_TYPE
from covey.agents.escalation import launch_escalation, refused_text
from covey.agents.fork import FORK_AGENT, FORK_REFUSAL, FORK_TYPE, fork_spec, in_fork_child
from covey.agents.worktree import Worktree, check_isolation, create_worktree, finish_worktree
from covey.agents.reports import SUMMARIES, completed_text, launched_text
from covey.agents.spec import TeamSeat
from covey.agents.transcript import transcript_path
from covey.actors.team_context import team_handles
from covey.errors import AgentUnavailable, CoveyError, ModelBehaviorError
from covey.events import (
    AssistantEvent, BackgroundTask, CompactBoundary, ResultEvent, TaskNotification, TaskStarted, TaskUpdated, TaskUsage, UserEvent,
    new_uuid, wire_usage,
)
from covey.ids import AgentId
from covey.permissions.decisions import Deny
from covey.tool_names import canonical_tool_name
from covey.registry.records import FinalReport, LaunchRequest
from covey.teams.roster import Member
from covey.tools.agent_schema import AsyncLaunched, Completed, TeammateSpawned, agent_input_model
from covey.tools.base import Tool, ToolContext, ToolResult

DESCRIPTION = """Launch a sub-agent to handle a task on its own: it gets its own conversation, tools \
and model, sees none of your conversation, and reports back when done. Give it a complete, \
self-contained prompt. Use several in one message to run independent tasks in parallel. \
With run_in_background the call returns at once and the result arrives later as a \
<task-notification>; without it, the agent's report is the result of this call. The agent \
types you can choose from are listed in a separate message."""

DESCRIPTION_FORKING = """Launch an agent to work on a task in the background: the call returns at \
once and the agent's report arrives later as a <task-notification>; do not guess it, and do \
not read the agent's output file to get it. Use several in one message to run independent \
tasks in parallel. With a subagent_type you get an agent of that type: its own conversation, \
tools and model; it sees none of your conversation, so give it a complete, self-contained \
prompt. The agent types you can choose from are listed in a separate message.

Without a subagent_type the agent is a fork of you: it starts from this conversation (your \
instructions, your tools, the files you have read), so its prompt is a short directive. Fork \
when a piece of work needs what you already know and would fill your context with output you \
need not keep: a search, a test run, an investigation, one part of a change. Give each fork \
one directive. Forks launched in one message run in parallel and share your prompt cache, \
so they cost little. Choose a subagent_type instead when the task wants a fresh view or a \
specialist. A fork cannot fork again."""


class AgentTool(Tool):
    name: ClassVar[str] = "Agent"
    description: ClassVar[str] = DESCRIPTION
    # Claude Code schedules the launcher as read-only: spawning is not a file change,
    # and every call of the child passes its own permission checks.
    read_only: ClassVar[bool] = True
    result_as_blocks: ClassVar[bool] = True
    """Claude Code sends the Agent tool's tool_result content as a list of text blocks."""

    def __init__(self, *, background: bool = True, teams: bool = False, remote: bool = False,
                 fork: bool = False) -> None:
        self.background_allowed = background
        self.fork = fork
        self.input_model = agent_input_model(background=background, teams=teams, remote=remote, fork=fork)
        if fork:  # static per configuration, like the schema: the cached prefix must not move
            self.description = DESCRIPTION_FORKING

    def permission_subject(self, input: Any, ctx: ToolContext | None = None) -> str | None:
        runtime = ctx.services.runtime if ctx is not None else None
        return input.subagent_type or (FORK_TYPE if self.fork else default_agent_type(runtime))

    def tool_use_result(self, result: ToolResult) -> Any:
        """Claude Code's structured result of the call: the launch or the sync child's end."""
        wire = getattr(result.data, "wire", None)
        return wire() if wire is not None else None

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        runtime, parent = ctx.services.runtime, ctx.services.spec
        if runtime is None or parent is None:
            return ToolResult.error("The Agent tool needs a covey session (no registry is reachable from here).")
        if routed := _unavailable_route(input, runtime):
            return ToolResult.error(routed)
        forking = self.fork and not input.subagent_type and not _names_teammate(input)
        if forking and (refused := _fork_refused(parent, ctx)):
            return ToolResult.error(refused)
        if refused := await _escalation_refused(self, input, ctx, parent, runtime, forking):
            return ToolResult.error(refused)
        try:
            return await Launch(input, ctx, parent, runtime, fork=forking).go()
        except CoveyError as exc:
            return ToolResult.error(str(exc))


async def _escalation_refused(tool: Tool, input: Any, ctx: ToolContext, parent: Any, runtime: Any, forking: bool) -> str | None:
    """A child more powerful than its parent starts only with a person's approval (covey/agents/escalation.py)."""
    agent_type = FORK_TYPE if forking else input.subagent_type or default_agent_type(runtime)
    definition = FORK_AGENT if forking else runtime.definitions.get(agent_type)
    ask = launch_escalation(parent, definition, input, agent_type)
    if ask is None:
        return None
    if ctx.services.confirm is None:
        return refused_text(ask, "Nobody can be asked here, so it was denied.")
    decision = await ctx.services.confirm(tool, input, ctx, ask)
    return refused_text(ask, decision.message) if isinstance(decision, Deny) else None


def default_agent_type(runtime: Any) -> str:
    """The type of a call that names none: ``worker`` in coordinator mode, else ``general-purpose``."""
    return WORKER_TYPE if getattr(runtime, "coordinator", False) else "general-purpose"


def _names_teammate(input: Any) -> bool:
    return bool(getattr(input, "name", None) and getattr(input, "team_name", None))


def _fork_refused(parent: Any, ctx: ToolContext) -> str | None:
    """Route 3's guard (docs/subagents.md#fork-children): no fork inside a fork, checked by the
    caller's query source and, should that have been lost, by the boilerplate in its history."""
    if ctx.services.cache_safe is None:
        return "Forking needs the calling agent's conversation, which is not available here."
    if in_fork_child(parent, ctx.services.cache_safe().messages):
        return FORK_REFUSAL
    return None


def _unavailable_route(input: Any, runtime: Any) -> str | None:
    if _names_teammate(input) and not runtime.teams:
        return "Teammates are not available in this session (teams are not enabled)."
    if input.isolation == "remote":
        return "Remote isolation is not available: no remote backend is configured."
    return None


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
            return await self._spawn_teammate()
        isolation = self.call.isolation or (self.definition.isolation if self.definition else None)
        self.place_problem = await asyncio.to_thread(
            check_isolation, cwd=self.call.cwd, isolation=isolation, base_cwd=self.parent.cwd,
        )
        worktree = None
        if isolation == "worktree" and self.place_problem is None and self.definition is not None:
            worktree = await create_worktree(self.parent.cwd, self.agent_id)
        try:
            return await self._launch(worktree)
        except BaseException:
            if worktree is not None:  # a refused or failed launch leaves no worktree behind
                await finish_worktree(worktree)
            raise

    async def _launch(self, worktree: Worktree | None) -> ToolResult:
        spec = None
        if self.fork:
            spec = fork_spec(self.parent, self.ctx.services.cache_safe(), self.call, agent_id=self.agent_id,
                             tool_use_id=self.ctx.tool_use_id, worktree=worktree)
        elif self.definition is not None:
            spec = await child_spec(
                self.parent, self.definition, self.call, agent_id=self.agent_id, tool_use_id=self.ctx.tool_use_id,
                background=self.background, available_tools=self.runtime.tool_names,
                cwd=worktree.cwd if worktree else None, worktree=worktree,
            )
        self.output_file = str(transcript_path(spec.transcript_dir, spec.session_id, self.agent_id)) if spec else None
        launched = await self.runtime.registry.launch(
            self._request(spec), spec, follow=not self.background, output_file=self.output_file,
            lane=placement_lane(spec, self.runtime),
        )
        if self.background:
            self._note_background()
        self._emit(TaskStarted(
            session_id=spec.session_id, agent_id=self.parent.agent_id, task_id=self.agent_id, run_id=self.run_id,
            tool_use_id=self.ctx.tool_use_id, description=self.call.description, subagent_type=self.agent_type,
            is_backgrounded=self.background, spawn_depth=self.parent.depth + 1, prompt=self.call.prompt,
        ))
        if self.background:
            return self._launched(spec)
        return await self._follow(launched.actor, spec)

    async def _spawn_teammate(self) -> ToolResult:
        """Route 1 (docs/subagents.md#the-call): a named agent joins a team, registered in its roster."""
        team = team_handles(self.ctx.services.team, self.call.team_name)
        if team is None:
            raise ModelBehaviorError(f"No team {self.call.team_name!r} here: create it with TeamCreate first.")
        added = await team.roster.add(self.member, self.agent_id, agent_type=self.agent_type, backend="actor")
        if not isinstance(added, Member):
            raise ModelBehaviorError(f"Teammate {self.member!r} was not spawned: {added.message}")
        try:
            spec = None
            if self.definition is not None:
                spec = await child_spec(
                    self.parent, self.definition, self.call, agent_id=self.agent_id, tool_use_id=self.ctx.tool_use_id,
                    background=True, available_tools=self.runtime.tool_names,
                )
                seat = TeamSeat(name=team.name, member=self.member, roster=team.roster, board=team.board)
                spec = spec.model_copy(update={"team": seat})
            output_file = str(transcript_path(spec.transcript_dir, spec.session_id, self.agent_id)) if spec else None
            await self.runtime.registry.launch(
                self._request(spec), spec, output_file=output_file, lane=placement_lane(spec, self.runtime),
            )
        except BaseException:
            await team.roster.remove(self.agent_id)
            raise
        self._note_background()
        output = TeammateSpawned(agentId=self.agent_id, name=self.member, team_name=team.name, color=added.color)
        text = (f"Teammate {self.member!r} ({self.agent_id}) joined team {team.name!r} and is working in the "
                "background. It claims pending tasks from the team's board; message it with SendMessage.")
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

    def _launched(self, spec: Any) -> ToolResult:
        output = AsyncLaunched(
            agentId=self.agent_id, description=self.call.description, prompt=self.call.prompt,
            resolvedModel=spec.model_id, outputFile=self.output_file,
        )
        return ToolResult(content=launched_text(self.agent_id, self.call.description, self.output_file), data=output)

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

    async def _completed(self, pump: asyncio.Task, spec: Any) -> ToolResult:
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
            agentId=self.agent_id, content=report.text, totalTokens=report.usage.total,
            totalToolUseCount=report.tool_uses, totalDurationMs=report.duration_ms,
            resolvedModel=spec.model_id, worktree=report.worktree, prompt=self.call.prompt,
            agentType=self.agent_type, usage=wire_usage(report.usage.model_dump()),
        )
        self._emit_ended(report, spec)
        one_shot = bool(self.definition and self.definition.one_shot)
        text = completed_text(self.agent_id, report, one_shot=one_shot)
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

    def _emit(self, event: Any) -> None:
        if self.ctx.emit is not None:
            self.ctx.emit(event)


FILE_TOOLS = frozenset({"Read", "Write", "Edit", "Glob", "Grep", "Bash", "NotebookEdit", "Skill"})


def placement_lane(spec: Any, runtime: Any) -> str:
    """Where the child's actor runs (docs/architecture.md): file-touching agents on the node holding the
    working tree ("home"), unless a shared filesystem is declared; agents without file
    tools anywhere in the cluster ("any": over the alive nodes in turn, see ``AgentFactory``)."""
    if not runtime.spread:
        return "home"  # one node: every agent is where the files are
    if spec is None or runtime.shared_fs:
        return "any"
    return "home" if FILE_TOOLS & set(spec.tool_names) else "any"
