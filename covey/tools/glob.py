"""Glob: find files by name pattern, most recently modified first."""

from __future__ import annotations

import asyncio
import glob as globlib
import os
from pathlib import Path

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult
from covey.tools.read import abs_path
from covey.tools.read_denials import read_denied, without_denied

MAX_RESULTS = 100


class GlobInput(ToolInput):
    pattern: str = Field(description="Glob pattern, e.g. '**/*.py' or 'src/*.{ts,tsx}'.")
    path: str | SkipJsonSchema[None] = Field(
        None, description="Directory to search in (default: the working directory)."
    )


class Glob(Tool):
    name = "Glob"
    path_rules = "Read"
    primary_field = "path"
    background = True
    activity = ("Finding", "pattern")
    description = (
        "Find files whose paths match a glob pattern (`*` within a directory, `**` across "
        "directories, `{a,b}` alternatives). Returns absolute paths, most recently modified "
        f"first, at most {MAX_RESULTS}. Hidden files match only patterns that name a dot."
    )
    input_model = GlobInput
    read_only = True

    def permission_subject(self, input: GlobInput, ctx: ToolContext | None = None) -> str | None:
        return search_root(input.path, ctx)

    async def run(self, input: GlobInput, ctx: ToolContext) -> ToolResult:
        root = abs_path(ctx, input.path or ".")
        if not root.is_dir():
            return ToolResult.error(f"Directory does not exist: {root}")
        paths = without_denied(await asyncio.to_thread(_find, root, input.pattern), read_denied(ctx))
        if not paths:
            return ToolResult(content=f"No files match {input.pattern!r} in {root}.")
        shown = "\n".join(paths[:MAX_RESULTS])
        if len(paths) > MAX_RESULTS:
            shown += (f"\n<{len(paths) - MAX_RESULTS} more files not shown; "
                      "narrow the pattern or the path>")
        return ToolResult(content=shown)


def search_root(path: str | None, ctx: ToolContext | None) -> str:
    """Glob's and Grep's permission subject: the absolute directory searched."""
    if ctx is not None:
        return str(abs_path(ctx, path or "."))
    return os.path.abspath(os.path.expanduser(path or "."))


def expand_braces(pattern: str) -> list[str]:
    """``a.{py,md}`` -> ``[a.py, a.md]`` (nested braces too), since fnmatch/glob lack braces."""
    open_at = pattern.find("{")
    close_at = _matching_brace(pattern, open_at) if open_at >= 0 else -1
    if close_at < 0:
        return [pattern]
    head, body, tail = pattern[:open_at], pattern[open_at + 1 : close_at], pattern[close_at + 1 :]
    return [e for alt in _split_top(body) for e in expand_braces(head + alt + tail)]


def _matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return -1


def _split_top(body: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    return parts + [body[start:]]


def _find(root: Path, pattern: str) -> list[str]:
    found: set[str] = set()
    for alternative in expand_braces(pattern):
        # An absolute pattern ignores root (os.path.join drops it), as a model would expect.
        full = os.path.join(globlib.escape(str(root)), alternative)
        matches = globlib.iglob(full, recursive=True)
        found.update(os.path.normpath(p) for p in matches if os.path.isfile(p))
    return sorted(found, key=newest_first)


def newest_first(path: str) -> tuple[float, str]:
    try:
        return (-os.path.getmtime(path), path)
    except OSError:  # deleted while we searched
        return (0.0, path)
