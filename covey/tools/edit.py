"""Edit: replace an exact string in a file the agent has read."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import Field

from covey.common import atomic
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult
from covey.tools.read import abs_path, record_read, subject_path, unread_error

_SNIPPET_CONTEXT_LINES = 3


class EditInput(ToolInput):
    file_path: str = Field(description="Path of the file (absolute, or relative to the cwd).")
    old_string: str = Field(description="The exact text to replace, indentation included.")
    new_string: str = Field(description="The text to put in its place (must differ).")
    replace_all: bool = Field(False, description="Replace every occurrence, not just one.")


class Edit(Tool):
    name = "Edit"
    path_rules = "Edit"
    primary_field = "file_path"
    memory = True
    background = True
    activity = ("Editing", "file_path")
    description = (
        "Replace an exact string in a file. The file must have been Read first. `old_string` "
        "must match the file exactly (whitespace included; leave out Read's line-number "
        "prefixes) and occur once, unless `replace_all` is set. Include a few surrounding lines "
        "to make a match unique."
    )
    input_model = EditInput

    def permission_subject(self, input: EditInput, ctx: ToolContext | None = None) -> str | None:
        return subject_path(input.file_path, ctx)

    async def run(self, input: EditInput, ctx: ToolContext) -> ToolResult:
        if input.old_string == input.new_string:
            return ToolResult.error("old_string and new_string are identical; nothing to change.")
        if not input.old_string:
            return ToolResult.error("old_string is empty; use Write to create or replace a file.")
        path = abs_path(ctx, input.file_path)
        return await asyncio.to_thread(_edit, ctx, path, input)


def _edit(ctx: ToolContext, path: Path, input: EditInput) -> ToolResult:
    if not path.is_file():
        return ToolResult.error(f"File does not exist: {path}. Use Write to create it.")
    if refusal := unread_error(ctx, path):
        return refusal
    # newline="" keeps \r\n files byte-identical outside the edited span.
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except UnicodeDecodeError:
        return ToolResult.error(f"{path} is not UTF-8 text; Edit cannot change it.")
    count = text.count(input.old_string)
    if count == 0:
        return ToolResult.error(f"old_string was not found in {path}. Read the file and copy "
                                "the text exactly, whitespace included.")
    if count > 1 and not input.replace_all:
        return ToolResult.error(
            f"old_string occurs {count} times in {path}. Add surrounding lines to make it "
            "unique, or set replace_all=true to replace every occurrence."
        )
    first = text.index(input.old_string)
    text = text.replace(input.old_string, input.new_string, -1 if input.replace_all else 1)
    try:
        atomic.write_text(path, text)
    except OSError as e:
        return ToolResult.error(atomic.failure(path, e))
    record_read(ctx, path)
    done = f"Replaced {count} occurrences" if input.replace_all else "Edited"
    return ToolResult(content=f"{done} in {path}:\n{_snippet(text, first, input.new_string)}")


def _snippet(text: str, start: int, new_string: str) -> str:
    """The edited lines with a little context, numbered like Read's output."""
    lines = text.splitlines()
    first_line = text.count("\n", 0, start)
    last_line = first_line + new_string.count("\n")
    lo = max(first_line - _SNIPPET_CONTEXT_LINES, 0)
    hi = min(last_line + _SNIPPET_CONTEXT_LINES + 1, len(lines))
    return "\n".join(f"{n + 1:>6}\t{lines[n]}" for n in range(lo, hi))
