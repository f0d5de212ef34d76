"""Read: a text file with line numbers, plus the read-file cache Write and Edit rely on."""

from __future__ import annotations

import asyncio
import os
from itertools import islice
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult
from covey.tools.read_media import MediaError, image_block, load_notebook, media_kind, notebook_blocks, pdf_text

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_WHOLE_FILE_BYTES = 256 * 1024
_SNIFF_BYTES = 8192
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
        lines, total, mtime = await asyncio.to_thread(_read_lines, path, start, limit)
        record_read(ctx, path, mtime)
        read = {"filePath": str(path), "content": "\n".join(lines), "numLines": len(lines), "startLine": start,
                "totalLines": total}
        return ToolResult(content=_render(lines, start, total, path), data=read)

    def tool_use_result(self, result: ToolResult) -> Any:
        """Claude Code's structured Read result: the file part it read."""
        if result.data and "type" in result.data:
            return result.data
        return {"type": "text", "file": result.data} if result.data else None


def _check_readable(path: Path, input: ReadInput) -> str | None:
    """Why this file cannot be read as asked, or None."""
    if not path.exists():
        return f"File does not exist: {path}"
    if path.is_dir():
        return f"{path} is a directory. Use Glob to find files in it, or Bash `ls` to list it."
    if path.suffix.lower() in _UNSUPPORTED:
        return f"{path}: Read shows PNG, JPEG, GIF and WebP images; convert this one to PNG first."
    if input.pages:
        return f"{path} is not a PDF: `pages` is for PDFs only; use offset and limit."
    with open(path, "rb") as f:
        if b"\0" in f.read(_SNIFF_BYTES):
            return f"{path} is a binary file; Read handles text files only."
    size = path.stat().st_size
    ranged = input.offset or input.limit or input.allow_large
    if size > MAX_WHOLE_FILE_BYTES and not ranged:
        return (
            f"{path} is {size // 1024} KiB, over the {MAX_WHOLE_FILE_BYTES // 1024} KiB limit for "
            "reading whole. Read it in parts with `offset` and `limit` (e.g. offset=1, "
            "limit=500), use Grep to find the part you need, or pass allow_large=true."
        )
    return None


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


def _read_lines(path: Path, start: int, limit: int) -> tuple[list[str], int, float]:
    """Lines ``start .. start+limit-1``, the file's line count, and its mtime.

    Streams the file so a ranged read of a huge file holds only the wanted lines.
    The mtime is taken before reading: if the file changes mid-read, the cached
    mtime is stale and Edit/Write will ask for a fresh Read.
    """
    mtime = path.stat().st_mtime
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = list(islice(f, start - 1, start - 1 + limit))
        total = start - 1 + len(lines) + sum(1 for _ in f)
    return [line.rstrip("\r\n") for line in lines], total, mtime


def _render(lines: list[str], start: int, total: int, path: Path) -> str:
    if total == 0:
        return f"<{path} is empty>"
    if not lines:
        return f"<{path} has {total} lines; offset {start} is past the end>"
    body = "\n".join(f"{n:>6}\t{_cut(line)}" for n, line in enumerate(lines, start))
    end = start + len(lines) - 1
    if end < total:
        body += f"\n<showing lines {start}-{end} of {total}; use offset={end + 1} to read on>"
    return body


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f"... [{len(line) - MAX_LINE_CHARS} characters cut]"
