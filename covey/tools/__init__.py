"""The tools an agent can call. ``core_tools()`` is the standard file-and-shell set."""

from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult
from covey.tools.bash import Bash
from covey.tools.edit import Edit
from covey.tools.glob import Glob
from covey.tools.grep import Grep
from covey.tools.processes import ProcessTracker
from covey.tools.read import Read
from covey.tools.todo import TodoWrite, clear_todos
from covey.tools.write import Write

__all__ = [
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "ProcessTracker",
    "Read",
    "TodoWrite",
    "Tool",
    "ToolContext",
    "ToolInput",
    "ToolResult",
    "Write",
    "clear_todos",
    "core_tools",
]


def core_tools() -> list[Tool]:
    """Fresh instances of the file, search, shell and todo tools, in Claude Code's order."""
    return [Read(), Write(), Edit(), Glob(), Grep(), Bash(), TodoWrite()]
