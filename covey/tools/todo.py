"""TodoWrite: the agent's own checklist for multi-step work."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import ConfigDict, Field

from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult


class TodoItem(ToolInput):
    model_config = ConfigDict(populate_by_name=True)

    content: str = Field(min_length=1, description="The task, imperative: 'Run the tests'.")
    status: Literal["pending", "in_progress", "completed"]
    active_form: str = Field(
        min_length=1, alias="activeForm",
        description="The task while under way: 'Running the tests'.",
    )


class TodoWriteInput(ToolInput):
    todos: list[TodoItem] = Field(description="The whole updated list; it replaces the old one.")


class TodoWrite(Tool):
    coordination = True
    name = "TodoWrite"
    touches_files = False
    background = True
    description = (
        "Keep a checklist for work with several steps. Send the whole list each time; it "
        "replaces the previous one. Keep exactly one item in_progress while working, and mark "
        "items completed as soon as they are done."
    )
    input_model = TodoWriteInput

    async def run(self, input: TodoWriteInput, ctx: ToolContext) -> ToolResult:
        todos = [item.model_dump(by_alias=True) for item in input.todos]
        ctx.todos[ctx.agent_id] = todos
        counts = Counter(item["status"] for item in todos)
        return ToolResult(
            content=f"Todo list saved: {counts['completed']} completed, "
            f"{counts['in_progress']} in progress, {counts['pending']} pending.",
            data=todos,
        )


def clear_todos(ctx: ToolContext) -> None:
    """Drop this agent's list (agent cleanup); other agents' lists stay."""
    ctx.todos.pop(ctx.agent_id, None)
