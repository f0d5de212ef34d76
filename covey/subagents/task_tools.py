"""TaskCreate, TaskGet, TaskList, TaskUpdate: the team's collaborative task board (docs/teams.md).

Not the running-task registry: these tasks are a shared to-do list; creating one
runs nothing. Claims by idle teammates go through ``board.claim``, not here.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from covey.hooks.team_events import feedback
from covey.teams.context import TeamContext, team_context
from covey.teams.ports import BoardProtocol
from covey.teams.tasks import Deleted, Task, Updated
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult

NO_BOARD = "No task board: you are not in a team (a lead creates one with TeamCreate)."


class _TaskInput(ToolInput):
    model_config = ConfigDict(populate_by_name=True)


class TaskCreateInput(_TaskInput):
    subject: str = Field(min_length=1, description="Short imperative title: 'Write the parser'.")
    description: str = Field(description="What done looks like, with the details a teammate needs.")
    active_form: str | SkipJsonSchema[None] = Field(
        default=None, alias="activeForm", description="The task while under way: 'Writing the parser'.")
    metadata: dict[str, Any] | SkipJsonSchema[None] = Field(default=None, description="Free-form data.")


class TaskGetInput(_TaskInput):
    task_id: str = Field(alias="taskId")


class TaskListInput(_TaskInput):
    """TaskList takes no input."""


class TaskUpdateInput(_TaskInput):
    task_id: str = Field(alias="taskId")
    subject: str | SkipJsonSchema[None] = None
    description: str | SkipJsonSchema[None] = None
    active_form: str | SkipJsonSchema[None] = Field(default=None, alias="activeForm")
    status: Literal["pending", "in_progress", "completed"] | Literal["deleted"] | SkipJsonSchema[None] = None
    add_blocks: list[str] | SkipJsonSchema[None] = Field(
        default=None, alias="addBlocks", description="Tasks that cannot start until this one is completed.")
    add_blocked_by: list[str] | SkipJsonSchema[None] = Field(
        default=None, alias="addBlockedBy", description="Tasks that must be completed before this one.")
    owner: str | SkipJsonSchema[None] = Field(default=None, description="A teammate name; '' to unassign.")
    metadata: dict[str, Any] | SkipJsonSchema[None] = Field(
        default=None, description="Keys to merge in; a key set to null is removed.")


class _BoardTool(Tool):
    coordination = True
    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        team = team_context(ctx.services)
        if team is None or team.board is None:
            return ToolResult.error(NO_BOARD)
        return await self.on_board(input, team.board, _TaskHooks(ctx, team))

    async def on_board(self, input: Any, board: BoardProtocol, hooks: "_TaskHooks") -> ToolResult:
        raise NotImplementedError


class _TaskHooks:
    """The calling agent's TaskCreated / TaskCompleted hooks, with Claude Code's fields for them
    (``teammate_name`` only inside a teammate). No hook registry (a bare context): nothing runs."""

    def __init__(self, ctx: ToolContext, team: TeamContext) -> None:
        self.registry, self.agent_id, self.cwd = ctx.services.hooks, ctx.agent_id, ctx.cwd
        teammate = getattr(ctx.services.spec, "team", None) is not None
        self.names = {"teammate_name": team.me if teammate else None, "team_name": team.team_name}

    async def refused(self, event: str, task: Task) -> str | None:
        """The feedback that refuses ``task``'s creation or completion, or None: the hooks let it be.
        Claude Code ignores ``continue: false`` from both events when a tool fires them."""
        if self.registry is None:
            return None
        run = self.registry.run_task_created if event == "TaskCreated" else self.registry.run_task_completed
        outcome = await run(self.agent_id, task.id, task.subject, task.description, cwd=self.cwd, **self.names)
        return feedback(event, outcome) if outcome.blocked else None


class TaskCreate(_BoardTool):
    name = "TaskCreate"
    description = ("Add a task to the team's task board: pending, unowned, no dependencies. "
                   "Creating a task does not start it; teammates claim it, or TaskUpdate assigns it.")
    input_model = TaskCreateInput

    async def on_board(self, input: TaskCreateInput, board: BoardProtocol, hooks: _TaskHooks) -> ToolResult:
        task = await board.create(input.subject, input.description, input.active_form, input.metadata)
        if refusal := await hooks.refused("TaskCreated", task):
            await board.update(task.id, {"status": "deleted"})  # as Claude Code: created, then deleted
            return ToolResult.error(refusal)
        return ToolResult(content=f"Task #{task.id} created: {task.subject}", data=task)


class TaskGet(_BoardTool):
    name = "TaskGet"
    description = "Show one task of the team's task board in full."
    input_model = TaskGetInput
    read_only = True

    async def on_board(self, input: TaskGetInput, board: BoardProtocol, hooks: _TaskHooks) -> ToolResult:
        task = await board.get(input.task_id)
        if task is None:
            return ToolResult.error(f"Task #{input.task_id} not found (TaskList shows the current tasks).")
        return ToolResult(content=_details(task, await board.blocked(task)), data=task)


class TaskList(_BoardTool):
    name = "TaskList"
    description = "List the team's tasks: id, status, subject, owner and unfinished blockers."
    input_model = TaskListInput
    read_only = True

    async def on_board(self, input: TaskListInput, board: BoardProtocol, hooks: _TaskHooks) -> ToolResult:
        tasks = await board.list()
        done = {t.id for t in tasks if t.status == "completed"}
        lines = [_line(t, [i for i in t.blocked_by if i not in done]) for t in tasks]
        return ToolResult(content="\n".join(lines) or "No tasks.", data=tasks)


class TaskUpdate(_BoardTool):
    name = "TaskUpdate"
    description = ("Change a task: status (pending, in_progress, completed, or deleted), owner, subject, "
                   "description, metadata, and dependencies (addBlocks / addBlockedBy). The fields and "
                   "the new dependency edges are written together or not at all. Mark a task completed "
                   "as soon as it is done.")
    input_model = TaskUpdateInput

    async def on_board(self, input: TaskUpdateInput, board: BoardProtocol, hooks: _TaskHooks) -> ToolResult:
        patch = input.model_dump(by_alias=True, exclude_unset=True, exclude={"task_id"})
        if input.status == "completed" and (refusal := await _completion_refused(input.task_id, board, hooks)):
            return ToolResult.error(refusal)  # nothing of the patch is written, as in Claude Code
        match await board.update(input.task_id, patch):
            case Deleted(task=task):
                return ToolResult(content=f"Task #{task.id} deleted: {task.subject}")
            case Updated(task=task, changed=changed):
                return ToolResult(content=_confirm(task, changed), data=task)
            case error:
                return ToolResult.error(f"Task #{input.task_id} was not changed: {error.message}")


async def _completion_refused(task_id: str, board: BoardProtocol, hooks: _TaskHooks) -> str | None:
    """TaskCompleted hooks run when a task not yet completed is marked so; their block keeps it open."""
    task = await board.get(task_id)
    if task is None or task.status == "completed":
        return None  # the board answers a missing task; an already completed one fires nothing
    return await hooks.refused("TaskCompleted", task)


def _line(task: Task, open_blockers: list[str]) -> str:
    owner = f" (owner: {task.owner})" if task.owner else ""
    blocked = f" [blocked by {_ids(open_blockers)}]" if open_blockers else ""
    return f"#{task.id} [{task.status}] {task.subject}{owner}{blocked}"


def _details(task: Task, open_blockers: list[str]) -> str:
    lines = [f"Task #{task.id}: {task.subject}", f"Status: {task.status}", f"Owner: {task.owner or 'none'}"]
    if task.blocked_by:
        lines.append(f"Blocked by: {_ids(task.blocked_by)} (unfinished: {_ids(open_blockers) or 'none'})")
    if task.blocks:
        lines.append(f"Blocks: {_ids(task.blocks)}")
    if task.metadata:
        lines.append(f"Metadata: {json.dumps(task.metadata, default=str)}")
    return "\n".join([*lines, "Description:", task.description])


def _confirm(task: Task, changed: list[str]) -> str:
    if not changed:
        return f"Task #{task.id} unchanged (the patch matched its current state)."
    shown = {"status": task.status, "owner": task.owner or "none"}
    parts = [f"{name} → {shown[name]}" if name in shown else name for name in changed]
    text = f"Updated task #{task.id} ({task.subject}): {', '.join(parts)}."
    if "status" in changed and task.status == "completed":
        text += " It is completed; check TaskList for the next available task."
    return text


def _ids(ids: list[str]) -> str:
    return ", ".join(f"#{i}" for i in ids)
