"""Write: create a file or replace one the agent has read."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import Field

from covey.common import atomic
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult
from covey.tools.read import abs_path, record_read, subject_path, unread_error


class WriteInput(ToolInput):
    file_path: str = Field(description="Path of the file (absolute, or relative to the cwd).")
    content: str = Field(description="The complete new content of the file.")


class Write(Tool):
    name = "Write"
    path_rules = "Edit"
    primary_field = "file_path"
    memory = True
    background = True
    activity = ("Writing", "file_path")
    description = (
        "Write a file, replacing it whole; missing parent directories are created. An existing "
        "file must have been Read first (and not changed since). To change part of a file, "
        "prefer Edit."
    )
    input_model = WriteInput

    def permission_subject(self, input: WriteInput, ctx: ToolContext | None = None) -> str | None:
        return subject_path(input.file_path, ctx)

    async def run(self, input: WriteInput, ctx: ToolContext) -> ToolResult:
        path = abs_path(ctx, input.file_path)
        return await asyncio.to_thread(_write, ctx, path, input.content)


def _write(ctx: ToolContext, path: Path, content: str) -> ToolResult:
    if path.is_dir():
        return ToolResult.error(f"{path} is a directory, not a file.")
    existed = path.exists()
    if existed and (refusal := unread_error(ctx, path)):
        return refusal
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, content)  # the text exactly as given (no \n -> os.linesep translation)
    except OSError as e:
        return ToolResult.error(atomic.failure(path, e))
    record_read(ctx, path)  # the agent knows this version: it just wrote it
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    verb = "Updated" if existed else "Created"
    return ToolResult(content=f"{verb} {path} ({lines} lines).")
