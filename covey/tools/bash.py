"""Bash: run a shell command in the agent's cwd, bounded in time and output."""

from __future__ import annotations

import asyncio
import codecs
import os
import secrets
import shutil
from typing import IO, Annotated, Any

from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from covey.common.private_dirs import PrivateDirError, open_private, private_dir, user_temp_dir
from covey.common.subprocess_env import for_subprocess
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult
from covey.tools.processes import BackgroundShell

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000


class BashInput(ToolInput):
    model_config = ConfigDict(populate_by_name=True)

    command: str = Field(description="The shell command to run.")
    timeout: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_MS)] | SkipJsonSchema[None] = Field(
        None,
        description=f"Milliseconds before the command is killed (default {DEFAULT_TIMEOUT_MS}, "
        f"max {MAX_TIMEOUT_MS}).",
    )
    description: str | SkipJsonSchema[None] = Field(
        None, description="A few words saying what the command does."
    )
    run_in_background: bool | SkipJsonSchema[None] = Field(
        None, description="Start the command and return at once with a task id and the file its output goes to; "
        "you are notified when it ends. Stop it with TaskStop."
    )
    dangerously_disable_sandbox: bool | SkipJsonSchema[None] = Field(
        None, alias="dangerouslyDisableSandbox",
        description="Accepted for compatibility; covey runs commands without a sandbox.",
    )


class Bash(Tool):
    name = "Bash"
    primary_field = "command"
    background = True
    description = (
        "Run a shell command (bash -c semantics) in the working directory and return its "
        "combined stdout and stderr. Output over 30,000 characters is cut. Commands are killed "
        "after `timeout` ms (default 2 minutes). Prefer Read/Glob/Grep/Edit for files; use this "
        "for builds, tests, git and other programs. `run_in_background` returns immediately "
        "with a file that collects the output."
    )
    input_model = BashInput

    def permission_subject(self, input: BashInput, ctx: ToolContext | None = None) -> str | None:
        return input.command

    async def run(self, input: BashInput, ctx: ToolContext) -> ToolResult:
        if ctx.abort.is_set():
            return ToolResult.error("Command not run: the agent was interrupted.")
        if input.run_in_background:
            return await _start_background(input, ctx)
        timeout_ms = input.timeout or DEFAULT_TIMEOUT_MS
        process = await _spawn(input.command, ctx, stdout=asyncio.subprocess.PIPE)
        reader = asyncio.ensure_future(_read_capped(process))
        aborted = asyncio.ensure_future(ctx.abort.wait())
        try:
            done, _ = await asyncio.wait(
                {reader, aborted}, timeout=timeout_ms / 1000,
                return_when=asyncio.FIRST_COMPLETED,
            )
        except BaseException:  # our caller cancelled us: nobody will await the reader
            reader.cancel()
            raise
        finally:
            aborted.cancel()
            if not reader.done():
                # Timeout, abort or our own cancellation: kill the whole group; that
                # closes the pipe, so the reader finishes with the partial output.
                await ctx.processes.kill(process.pid)
        output = await reader
        if reader in done:
            await process.wait()
            return _finished(output, process.returncode)
        if aborted in done:
            return ToolResult.error(_join(output, "Command interrupted: the agent was aborted."))
        return ToolResult.error(_join(output, f"Command timed out after {timeout_ms:g} ms."))


BASH = shutil.which("bash") or "/bin/bash"


async def _spawn(command: str, ctx: ToolContext, stdout: int | IO[Any]) -> asyncio.subprocess.Process:
    # A new session makes the shell a group leader, so the group can be killed whole.
    # bash, not /bin/sh: the permission gate judged the command with bash's grammar, and the
    # model is told "bash -c semantics" (on Debian /bin/sh is dash, which reads it differently).
    process = await asyncio.create_subprocess_exec(
        BASH, "-c", command, cwd=ctx.cwd, env=for_subprocess(ctx.env), stdin=asyncio.subprocess.DEVNULL,
        stdout=stdout, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
    )
    ctx.processes.track(process)
    return process


async def _read_capped(process: asyncio.subprocess.Process) -> str:
    """All output up to the cap, plus a note of how many characters were cut.

    Reads to EOF but keeps only the first ``MAX_OUTPUT_CHARS``, so a command that
    prints gigabytes costs no memory.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    kept: list[str] = []
    kept_chars = total_chars = 0
    stream = process.stdout
    if stream is None:  # started without a pipe: there is nothing to read
        return ""
    while chunk := await stream.read(65536):
        text = decoder.decode(chunk)
        total_chars += len(text)
        if kept_chars < MAX_OUTPUT_CHARS:
            kept.append(text[: MAX_OUTPUT_CHARS - kept_chars])
            kept_chars += len(kept[-1])
    output = "".join(kept)
    if total_chars > kept_chars:
        output += f"\n... [output truncated: {total_chars - kept_chars} more characters cut]"
    return output


def _finished(output: str, code: int | None) -> ToolResult:
    if code == 0:
        return ToolResult(content=output or "(no output)")
    return ToolResult(content=_join(output, f"Exit code {code}"), is_error=True)


def _join(output: str, note: str) -> str:
    return f"{output.rstrip()}\n{note}" if output.strip() else note


async def _start_background(input: BashInput, ctx: ToolContext) -> ToolResult:
    """Claude Code's background shell: an id like ``b3k9x0qz1``, output in
    ``<tempdir>/covey-<uid>/<agent>/tasks/<id>.output`` (0600, in folders only this user may open)."""
    shell_id = "b" + "".join(secrets.choice(_ID_CHARS) for _ in range(8))
    try:  # the output may hold anything the command prints (secrets too): this user's eyes only
        output_path = private_dir(user_temp_dir() / ctx.agent_id / "tasks") / f"{shell_id}.output"
        log = os.fdopen(open_private(output_path, os.O_WRONLY | os.O_TRUNC), "wb")
    except (PrivateDirError, OSError) as e:
        return ToolResult.error(f"Could not start the background command: {e}")
    with log:  # the child keeps its own copy of the fd
        process = await _spawn(input.command, ctx, stdout=log)
    ctx.processes.start_background(BackgroundShell(
        shell_id, input.command, output_path, process, description=input.description or "",
        tool_use_id=ctx.tool_use_id))
    return ToolResult(
        content=f"Command running in background with ID: {shell_id}. Output is being written to: {output_path}. "
        "You will be notified when it completes. To check interim output, use Read on that file path. "
        "It is killed when this agent ends.",
        data={"backgroundTaskId": shell_id, "outputFile": str(output_path)},
    )


_ID_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"
