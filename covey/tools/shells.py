"""TaskOutput and TaskStop: read a background shell's or agent's output, and stop it.

Claude Code 2.1's names and fields. Reading the output file with ``Read`` works too
(Claude Code now prefers it); ``TaskOutput`` adds the status and exit code, and can wait.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Annotated

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from covey.tools.agent_output import agent_output
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult
from covey.tools.processes import BackgroundShell

DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000


class TaskOutputInput(ToolInput):
    task_id: str = Field(description="The id of the background task (a background Bash's or agent's id).")
    block: bool = Field(True, description="Wait for the task to finish (up to `timeout`) before answering.")
    timeout: Annotated[float, Field(ge=0, le=MAX_WAIT_MS)] = Field(
        DEFAULT_WAIT_MS, description=f"Milliseconds to wait when blocking (default {DEFAULT_WAIT_MS}, max {MAX_WAIT_MS}).")


class TaskOutput(Tool):
    name = "TaskOutput"
    touches_files = False
    lead_only = True
    description = (
        "Get the status and output of a background task: a Bash `run_in_background` shell, or a "
        "background agent (its report once it has ended). With "
        "block=true (the default) it waits up to `timeout` ms for the task to end. You can also Read the "
        "task's output file directly."
    )
    input_model = TaskOutputInput
    read_only = True

    async def run(self, input: TaskOutputInput, ctx: ToolContext) -> ToolResult:
        shell = ctx.processes.background.get(input.task_id)
        if shell is None:
            agent = await agent_output(input.task_id, ctx, block=input.block, timeout_s=input.timeout / 1000)
            return agent or ToolResult.error(f"No task found with ID: {input.task_id}")
        if shell.status == "running" and input.block:
            await _ended_within(shell, input.timeout / 1000, ctx)
        elif shell.process.returncode is not None and shell.watcher is not None:
            await asyncio.shield(shell.watcher)  # it has ended: let the watcher record how
        retrieval = "success" if shell.status != "running" else ("timeout" if input.block else "not_ready")
        return ToolResult(content=_render(shell, retrieval), data={"retrieval_status": retrieval, "status": shell.status})


async def _ended_within(shell: BackgroundShell, timeout_s: float, ctx: ToolContext) -> None:
    ended = asyncio.ensure_future(shell.process.wait())
    aborted = asyncio.ensure_future(ctx.abort.wait())
    try:
        await asyncio.wait({ended, aborted}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        aborted.cancel()
        if not ended.done():
            ended.cancel()
    if ended.done() and shell.watcher is not None:
        await asyncio.shield(shell.watcher)  # status and exit code are set there


def _render(shell: BackgroundShell, retrieval: str) -> str:
    """Claude Code's TaskOutput text: tagged parts separated by blank lines."""
    parts = [f"<retrieval_status>{retrieval}</retrieval_status>", f"<task_id>{shell.shell_id}</task_id>",
             "<task_type>local_bash</task_type>", f"<status>{shell.status}</status>"]
    if shell.exit_code is not None:
        parts.append(f"<exit_code>{shell.exit_code}</exit_code>")
    output = _tail(shell)
    if output.strip():
        parts.append(f"<output>\n{output.rstrip()}\n</output>")
    return "\n\n".join(parts)


def _tail(shell: BackgroundShell) -> str:
    """The output, its last ``MAX_OUTPUT_CHARS`` when longer (the end is what tells how it went).

    Only the file's end is read (4 bytes a character at most, in UTF-8): a command that
    has written gigabytes costs no more memory than one that wrote a page."""
    try:
        with open(shell.output_path, "rb") as f:
            start = max(0, f.seek(0, os.SEEK_END) - MAX_OUTPUT_CHARS * 4)
            f.seek(start)
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    if start == 0 and len(text) <= MAX_OUTPUT_CHARS:
        return text
    return f"[Truncated: the full output is in {shell.output_path}]\n" + text[-MAX_OUTPUT_CHARS:]


class TaskStopInput(ToolInput):
    task_id: str | SkipJsonSchema[None] = Field(None, description="The id of the background task to stop.")
    shell_id: str | SkipJsonSchema[None] = Field(None, description="Deprecated: use task_id.")


class TaskStop(Tool):
    name = "TaskStop"
    touches_files = False
    lead_only = True
    description = (
        "Stop a running background task by its id: a background Bash shell (its whole process group is "
        "killed) or a background agent."
    )
    input_model = TaskStopInput
    coordination = True  # it only ends this agent's own background work: no approval, as in Claude Code

    async def run(self, input: TaskStopInput, ctx: ToolContext) -> ToolResult:
        task_id = input.task_id or input.shell_id
        if not task_id:
            return ToolResult.error("Missing required parameter: task_id")
        shell = ctx.processes.background.get(task_id)
        if shell is not None:
            return await _stop_shell(shell, ctx)
        runtime = ctx.services.runtime
        # An agent's id, whole or as its Agent call's result shows it (without "agent-").
        if runtime is not None and await runtime.registry.kill_agent(task_id, "stopped by TaskStop"):
            return _stopped(task_id, "local_agent", task_id)
        if runtime is not None and await runtime.registry.record(task_id) is not None:
            return ToolResult.error(f"Task {task_id} is not running.")
        return ToolResult.error(f"No task found with ID: {task_id}")


async def _stop_shell(shell: BackgroundShell, ctx: ToolContext) -> ToolResult:
    if shell.status != "running":
        return ToolResult.error(f"Task {shell.shell_id} is not running (status: {shell.status})")
    await ctx.processes.stop(shell)
    return _stopped(shell.shell_id, "local_bash", shell.command)


def _stopped(task_id: str, task_type: str, what: str) -> ToolResult:
    result = {"message": f"Successfully stopped task: {task_id} ({what})", "task_id": task_id, "task_type": task_type}
    return ToolResult(content=json.dumps(result), data=result)
