"""Read: a text file with line numbers, plus the read-file cache Write and Edit rely on.

Only regular files are read: a FIFO, a device or a socket could block the read for
ever (a FIFO with no writer) or never end (``/dev/zero``), so they are refused with
an error the model can act on. What one Read returns is bounded three ways: lines
(``limit``), characters per line (``MAX_LINE_CHARS``, and a long line is never held
whole in memory) and characters in all (``MAX_RESULT_CHARS``).
"""

from __future__ import annotations

import asyncio
import io
import os
import stat
from pathlib import Path
from typing import IO, Annotated, Any, Iterator

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from covey.common.bounded import NotRegularFile, file_kind, open_regular
from covey.tools.base import MAX_RESULT_CHARS, Tool, ToolContext, ToolInput, ToolResult
from covey.tools.read_media import MediaError, image_block, load_notebook, media_kind, notebook_blocks, pdf_text

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_WHOLE_FILE_BYTES = 256 * 1024
_SNIFF_BYTES = 8192
_CHUNK_CHARS = 65536
_JS_MAX_INT = 9007199254740991  # Claude Code's schema bound; kept so the schemas match
_UNSUPPORTED = {".bmp", ".ico", ".tiff"}


def abs_path(ctx: ToolContext, path: str) -> Path:
    """The normalised absolute path, so ``a/../b`` and ``b`` share one cache entry."""
    return Path(os.path.abspath(ctx.resolve(path)))


def subject_path(path: str, ctx: ToolContext | None) -> str:
    """A permission subject: the absolute path, against the agent's cwd when ``ctx`` is given."""
    return str(abs_path(ctx, path)) if ctx else os.path.abspath(os.path.expanduser(path))


def record_read(ctx: ToolContext, path: Path, mtime: float | None = None) -> None:
    ctx.read_files[str(path)] = path.stat().st_mtime if mtime is None else mtime


def unread_error(ctx: ToolContext, path: Path) -> ToolResult | None:
    """Claude Code's rule: an existing file is changed only after reading its current version."""
    seen = ctx.read_files.get(str(path))
    if seen is None:
        return ToolResult.error(f"{path} has not been read yet. Read it first, then retry.")
    if path.stat().st_mtime != seen:
        return ToolResult.error(
            f"{path} changed since it was last read. Read it again before changing it."
        )
    return None


class ReadInput(ToolInput):
    file_path: str = Field(description="Path of the file (absolute, or relative to the cwd).")
    offset: Annotated[int, Field(ge=0, le=_JS_MAX_INT)] | SkipJsonSchema[None] = Field(
        None, description="1-based line number to start at (0 or omitted: the first line)."
    )
    limit: Annotated[int, Field(gt=0, le=_JS_MAX_INT)] | SkipJsonSchema[None] = Field(
        None, description=f"Maximum number of lines to return (default {DEFAULT_LIMIT})."
    )
    pages: str | SkipJsonSchema[None] = Field(
        None, description="Page range of a PDF, e.g. '1-5' (at most 20 pages a call; needed over 10 pages)."
    )
    allow_large: bool | SkipJsonSchema[None] = Field(
        None, description="Read a file over 256 KiB whole instead of in parts."
    )


class Read(Tool):
    name = "Read"
    path_rules = "Read"
    primary_field = "file_path"
    memory = True
    background = True
    activity = ("Reading", "file_path")
    description = (
        "Read a file. Text comes numbered like `cat -n` (number, tab, text); the numbers "
        f"are not part of the file. Returns up to {DEFAULT_LIMIT} lines from `offset` (1-based); "
        f"lines longer than {MAX_LINE_CHARS} characters are cut. Files over 256 KiB must be read "
        "in parts with offset/limit. Images (PNG, JPEG, GIF, WebP) are shown to you; PDFs give their "
        "text page by page (`pages`, e.g. '1-5'); notebooks (.ipynb) their cells with outputs. "
        "Read a file before you Edit or overwrite it."
    )
    input_model = ReadInput
    read_only = True

    def permission_subject(self, input: ReadInput, ctx: ToolContext | None = None) -> str | None:
        return subject_path(input.file_path, ctx)

    async def run(self, input: ReadInput, ctx: ToolContext) -> ToolResult:
        path = abs_path(ctx, input.file_path)
        if (kind := media_kind(path)) and path.is_file():
            return await asyncio.to_thread(_read_media, ctx, path, kind, input)
        problem = await asyncio.to_thread(_check_readable, path, input)
        if problem:
            return ToolResult.error(problem)
        start = max(input.offset or 1, 1)
        limit = input.limit or DEFAULT_LIMIT
        try:
            lines, total, mtime = await asyncio.to_thread(_read_lines, path, start, limit)
        except NotRegularFile as exc:  # swapped for a FIFO since the check
            return ToolResult.error(_not_regular(str(exc)))
        record_read(ctx, path, mtime)
        read = {"filePath": str(path), "content": "\n".join(line for line, _ in lines), "numLines": len(lines),
                "startLine": start, "totalLines": total}
        return ToolResult(content=_render(lines, start, total, path, capped=len(lines) < limit), data=read)

    def tool_use_result(self, result: ToolResult) -> Any:
        """Claude Code's structured Read result: the file part it read."""
        if result.data and "type" in result.data:
            return result.data
        return {"type": "text", "file": result.data} if result.data else None


def _check_readable(path: Path, input: ReadInput) -> str | None:
    """Why this file cannot be read as asked, or None."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return f"File does not exist: {path}"
    if stat.S_ISDIR(mode):
        return f"{path} is a directory. Use Glob to find files in it, or Bash `ls` to list it."
    if not stat.S_ISREG(mode):
        return _not_regular(f"{path} is {file_kind(mode)}, not a regular file")
    if path.suffix.lower() in _UNSUPPORTED:
        return f"{path}: Read shows PNG, JPEG, GIF and WebP images; convert this one to PNG first."
    if input.pages:
        return f"{path} is not a PDF: `pages` is for PDFs only; use offset and limit."
    try:
        with open_regular(path) as f:
            if b"\0" in f.read(_SNIFF_BYTES):
                return f"{path} is a binary file; Read handles text files only."
    except NotRegularFile as exc:
        return _not_regular(str(exc))
    size = path.stat().st_size
    ranged = input.offset or input.limit or input.allow_large
    if size > MAX_WHOLE_FILE_BYTES and not ranged:
        return (
            f"{path} is {size // 1024} KiB, over the {MAX_WHOLE_FILE_BYTES // 1024} KiB limit for "
            "reading whole. Read it in parts with `offset` and `limit` (e.g. offset=1, "
            "limit=500), use Grep to find the part you need, or pass allow_large=true."
        )
    return None


def _not_regular(what: str) -> str:
    return (f"{what}: Read reads regular files only (reading a pipe, device or socket may never end). "
            "If you must read from it, use Bash with a timeout, e.g. `timeout 5 head -c 10000 FILE`.")


def _read_media(ctx: ToolContext, path: Path, kind: str, input: ReadInput) -> ToolResult:
    """An image as an image block, a PDF's pages as text, a notebook's cells with their outputs."""
    if input.pages and kind != "pdf":
        return ToolResult.error(f"{path} is not a PDF: `pages` is for PDFs only.")
    mtime = path.stat().st_mtime
    try:
        if kind == "image":
            block = image_block(path)
            result = ToolResult(content="", blocks=[block], data={"type": "image", "file": {"filePath": str(path)}})
        elif kind == "pdf":
            text, total = pdf_text(path, input.pages)
            result = ToolResult(content=text, data={"type": "pdf", "file": {"filePath": str(path), "totalPages": total}})
        else:
            text, images = notebook_blocks(load_notebook(path))
            result = ToolResult(content=text, blocks=images, data={"type": "notebook", "file": {"filePath": str(path)}})
    except MediaError as exc:
        return ToolResult.error(str(exc))
    record_read(ctx, path, mtime)  # NotebookEdit, like Edit, needs the version the agent saw
    return result


Line = tuple[str, int]
"""A line's head (at most ``MAX_LINE_CHARS + 1`` characters, no line end) and its full length."""


def _read_lines(path: Path, start: int, limit: int) -> tuple[list[Line], int, float]:
    """Lines ``start .. start+limit-1`` (fewer once ``MAX_RESULT_CHARS`` is reached), the file's
    line count, and its mtime.

    Streams the file so a ranged read of a huge file holds only the wanted lines.
    The mtime is taken before reading: if the file changes mid-read, the cached
    mtime is stale and Edit/Write will ask for a fresh Read.
    """
    mtime = path.stat().st_mtime
    lines: list[Line] = []
    shown = total = 0
    with io.TextIOWrapper(open_regular(path), encoding="utf-8", errors="replace") as f:
        for total, (head, length) in enumerate(_bounded_lines(f), 1):
            if start <= total < start + limit and shown <= MAX_RESULT_CHARS:
                shown += min(length, MAX_LINE_CHARS) + 8  # the number, the tab, the newline
                if shown <= MAX_RESULT_CHARS or not lines:
                    lines.append((head, length))
    return lines, total, mtime


def _bounded_lines(f: IO[str]) -> Iterator[Line]:
    """Each line as a :data:`Line`: a minified file's megabyte-long line is counted, never held."""
    while head := f.readline(MAX_LINE_CHARS + 1):
        length, tail = len(head), head
        while not tail.endswith("\n") and (tail := f.readline(_CHUNK_CHARS)):
            length += len(tail)
        ending = len(tail) - len(tail.rstrip("\r\n")) if tail.endswith("\n") else 0
        yield head.rstrip("\r\n"), length - ending


def _render(lines: list[Line], start: int, total: int, path: Path, *, capped: bool = False) -> str:
    if total == 0:
        return f"<{path} is empty>"
    if not lines:
        return f"<{path} has {total} lines; offset {start} is past the end>"
    body = "\n".join(f"{n:>6}\t{_cut(head, length)}" for n, (head, length) in enumerate(lines, start))
    end = start + len(lines) - 1
    if end < total:
        why = f" (the {MAX_RESULT_CHARS:,}-character cap of one Read)" if capped else ""
        body += f"\n<showing lines {start}-{end} of {total}{why}; use offset={end + 1} to read on>"
    return body


def _cut(head: str, length: int) -> str:
    if length <= MAX_LINE_CHARS:
        return head
    return head[:MAX_LINE_CHARS] + f"... [{length - MAX_LINE_CHARS} characters cut]"
