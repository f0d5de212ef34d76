"""Grep: search file contents by regex, with ripgrep when installed and Python otherwise.

Both backends print ripgrep's line format (``path:12:text`` for matches,
``path-11-text`` for context, ``--`` between groups), so results read the same
wherever covey runs. The Python one does not read .gitignore files. Neither reads
a FIFO, device or socket (a FIFO with no writer would block the search for ever):
a folder's are skipped, and a path naming one is an error. What ``rg`` prints is
kept up to ``MAX_RG_OUTPUT_CHARS``, so a search matching every line of a huge
tree costs bounded memory.
"""

from __future__ import annotations

import asyncio
import bisect
import fnmatch
import os
import re
import shutil
from pathlib import Path
from typing import Annotated, Literal

from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from covey.bounded import NotRegularFile, file_kind, open_regular, read_bounded
from covey.subprocess_env import for_subprocess
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult
from covey.tools.glob import expand_braces, newest_first, search_root
from covey.tools.read import abs_path
from covey.tools.read_denials import Denied, denied_below, read_denied, without_denied

MAX_OUTPUT_CHARS = 30_000
MAX_LINE_CHARS = 500  # minified files put megabytes on one line
MAX_RG_OUTPUT_CHARS = 8_000_000
"""What is kept of ``rg``'s output: room for offset/head_limit paging and newest-first sorting."""
_SKIP_DIRS = {".git", ".hg", ".svn", ".jj"}
_SNIFF_BYTES = 8192
FILE_TYPES = {
    "py": ["*.py", "*.pyi"], "js": ["*.js", "*.mjs", "*.cjs", "*.jsx"], "ts": ["*.ts", "*.tsx"],
    "go": ["*.go"], "rust": ["*.rs"], "java": ["*.java"], "c": ["*.c", "*.h"],
    "cpp": ["*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.h"], "rb": ["*.rb"],
    "sh": ["*.sh", "*.bash"],
    "md": ["*.md", "*.markdown"], "json": ["*.json"], "yaml": ["*.yaml", "*.yml"],
    "toml": ["*.toml"], "html": ["*.html", "*.htm"], "css": ["*.css", "*.scss"], "txt": ["*.txt"],
}
_Count = Annotated[float, Field(ge=0)] | SkipJsonSchema[None]
_Flag = bool | SkipJsonSchema[None]
_Text = str | SkipJsonSchema[None]


class GrepInput(ToolInput):
    model_config = ConfigDict(populate_by_name=True)

    pattern: str = Field(description="Regular expression (Rust/Python syntax) to search for.")
    path: _Text = Field(None, description="File or directory to search (default: cwd).")
    glob: _Text = Field(None, description="Only files matching this glob, e.g. '*.{ts,tsx}'.")
    output_mode: Literal["content", "files_with_matches", "count"] | SkipJsonSchema[None] = Field(
        None, description="files_with_matches (default), content (lines) or count (per file)."
    )
    before: _Count = Field(None, alias="-B", description="Context lines before each match.")
    after: _Count = Field(None, alias="-A", description="Context lines after each match.")
    around: _Count = Field(None, alias="-C", description="Context lines before and after.")
    context: _Count = Field(None, description="Same as -C.")
    line_numbers: _Flag = Field(None, alias="-n", description="Line numbers (content; default on).")
    ignore_case: _Flag = Field(None, alias="-i", description="Case-insensitive search.")
    only_matching: _Flag = Field(None, alias="-o", description="Print only the matched text.")
    file_type: _Text = Field(None, alias="type", description="File type: py, js, ts, rust, go...")
    head_limit: _Count = Field(None, description="Return at most this many lines/files/counts.")
    offset: _Count = Field(None, description="Skip this many lines/files/counts first.")
    multiline: _Flag = Field(None, description="Let matches span lines ('.' matches newline).")


class Grep(Tool):
    name = "Grep"
    path_rules = "Read"
    primary_field = "path"
    background = True
    activity = ("Searching for", "pattern")
    description = (
        "Search file contents with a regular expression. Default output lists matching files "
        "(newest first); output_mode='content' shows matching lines (-A/-B/-C for context), "
        "'count' shows matches per file. Filter files with `glob` or `type`; page with "
        "offset/head_limit. Use this instead of running grep or rg through Bash."
    )
    input_model = GrepInput
    read_only = True

    def __init__(self, use_ripgrep: bool | None = None) -> None:
        """``use_ripgrep=None`` uses ``rg`` when it is on PATH."""
        self.use_ripgrep = shutil.which("rg") is not None if use_ripgrep is None else use_ripgrep

    def permission_subject(self, input: GrepInput, ctx: ToolContext | None = None) -> str | None:
        return search_root(input.path, ctx)

    async def run(self, input: GrepInput, ctx: ToolContext) -> ToolResult:
        root = abs_path(ctx, input.path or ".")
        if not root.exists():
            return ToolResult.error(f"Path does not exist: {root}")
        if not (root.is_dir() or root.is_file()):
            kind = file_kind(root.stat().st_mode)
            return ToolResult.error(f"{root} is {kind}: Grep searches regular files and folders only.")
        ripgrep = self._ripgrep_for(ctx)
        if input.file_type and not ripgrep and input.file_type not in FILE_TYPES:
            known = ", ".join(FILE_TYPES)
            return ToolResult.error(f"Unknown type {input.file_type!r}; known types: {known}")
        denied = read_denied(ctx)
        try:
            hidden = await asyncio.to_thread(denied_below, root, denied, _SKIP_DIRS) if denied and root.is_dir() else []
            # With files to hide, covey's own search runs: it filters exactly what the rules name.
            lines = await (_ripgrep(root, input, ctx.env) if ripgrep and not hidden else _python_grep(root, input, denied))
        except (re.error, RuntimeError) as e:
            return ToolResult.error(f"Grep failed: {e}")
        return ToolResult(content=_render(lines, input))


    def _ripgrep_for(self, ctx: ToolContext) -> bool:
        """Whether this call runs ``rg``: it must also be on the run's ``PATH`` when the run has an env."""
        if not self.use_ripgrep or ctx.env is None:
            return self.use_ripgrep
        return shutil.which("rg", path=ctx.env.get("PATH", os.defpath)) is not None


def _mode(input: GrepInput) -> str:
    return input.output_mode or "files_with_matches"


def _context(input: GrepInput) -> tuple[int, int]:
    around = input.around if input.around is not None else (input.context or 0)
    before = input.before if input.before is not None else around
    after = input.after if input.after is not None else around
    return int(before), int(after)


async def _ripgrep(root: Path, input: GrepInput, env: dict[str, str] | None = None) -> list[str]:
    args = ["rg", "--no-heading", "--color=never", "--hidden", "-H"]
    args += [f"--glob=!{d}" for d in _SKIP_DIRS]
    mode = _mode(input)
    if mode == "files_with_matches":
        args.append("-l")
    elif mode == "count":
        args.append("-c")
    else:
        before, after = _context(input)
        args += [f"-B{before}", f"-A{after}"] + (["-n"] if input.line_numbers is not False else [])
        args += ["-o"] if input.only_matching else []
    args += ["-i"] if input.ignore_case else []
    args += ["-U", "--multiline-dotall"] if input.multiline else []
    args += [f"--type={input.file_type}"] if input.file_type else []
    args += [f"--glob={input.glob}"] if input.glob else []
    proc = await asyncio.create_subprocess_exec(
        *args, "-e", input.pattern, "--", str(root),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=for_subprocess(env),
    )
    out, err = await asyncio.gather(read_bounded(proc.stdout, MAX_RG_OUTPUT_CHARS), read_bounded(proc.stderr, 10_000))
    await proc.wait()
    # rg exits 1 for "no match" and 2 for errors, even when other files matched.
    if proc.returncode == 2 and not out.text:
        raise RuntimeError(err.text.strip())
    lines = out.text.splitlines()
    if not out.complete:  # the last line kept may be a part: drop it, and say the rest was not read
        lines[-1:] = [f"<rg printed {out.total_chars:,} characters; only the first {MAX_RG_OUTPUT_CHARS:,} were "
                      "read: narrow the search>"]
    return lines


async def _python_grep(root: Path, input: GrepInput, denied: Denied | None = None) -> list[str]:
    flags = (re.IGNORECASE if input.ignore_case else 0) | re.MULTILINE
    regex = re.compile(input.pattern, flags | (re.DOTALL if input.multiline else 0))
    files = without_denied(await asyncio.to_thread(_files, root, input), denied)
    return await asyncio.to_thread(_search_files, files, regex, input)


def _files(root: Path, input: GrepInput) -> list[str]:
    if root.is_file():
        return [str(root)]
    globs = expand_braces(input.glob) if input.glob else None
    types = FILE_TYPES[input.file_type] if input.file_type else None
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if (not globs or _glob_match(rel, name, globs)) and (
                not types or any(fnmatch.fnmatch(name, t) for t in types)
            ):
                found.append(os.path.join(dirpath, name))
    return found


def _glob_match(rel: str, name: str, globs: list[str]) -> bool:
    # Like rg: a glob without '/' matches the file name, one with '/' the relative path.
    return any(fnmatch.fnmatch(rel if "/" in g else name, g.lstrip("/")) for g in globs)


def _search_files(files: list[str], regex: re.Pattern[str], input: GrepInput) -> list[str]:
    out: list[str] = []
    for path in files:
        text = _read_text(path)
        if not text:
            continue
        hits = _hits(text, regex, bool(input.multiline))
        if hits:
            out += _file_output(path, _lines(text), hits, input, separate=bool(out))
    return out


def _read_text(path: str) -> str | None:
    """The file's text, or None for binary, unreadable or non-regular files (skipped, like rg)."""
    try:
        with open_regular(path) as f:
            data = f.read()
    except (NotRegularFile, OSError):
        return None
    return None if b"\0" in data[:_SNIFF_BYTES] else data.decode("utf-8", errors="replace")


def _lines(text: str) -> list[str]:
    # Split on "\n" only (not str.splitlines' \f, \v, \u2028...): line numbers must
    # agree with the newline offsets multiline matching counts, and with rg's.
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _hits(text: str, regex: re.Pattern[str], multiline: bool) -> dict[int, list[str]]:
    """Line index -> matched texts on it (a multiline match marks every line it spans)."""
    hits: dict[int, list[str]] = {}
    if not multiline:
        for i, line in enumerate(_lines(text)):
            found = [m.group(0) for m in regex.finditer(line)]
            if found:
                hits[i] = found
        return hits
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    for m in regex.finditer(text):
        first = bisect.bisect_right(starts, m.start()) - 1
        last = bisect.bisect_right(starts, max(m.end() - 1, m.start())) - 1
        for i in range(first, last + 1):
            hits.setdefault(i, [])
        hits[first].append(m.group(0))
    return hits


def _file_output(
    path: str, lines: list[str], hits: dict[int, list[str]], input: GrepInput, separate: bool
) -> list[str]:
    mode = _mode(input)
    if mode == "files_with_matches":
        return [path]
    if mode == "count":
        return [f"{path}:{len(hits)}"]
    numbered = input.line_numbers is not False
    if input.only_matching:
        return [f"{path}:{i + 1}:{t}" if numbered else f"{path}:{t}"
                for i in sorted(hits) for t in hits[i] if t]
    before, after = _context(input)
    shown = sorted(
        {j for i in hits for j in range(max(i - before, 0), min(i + after + 1, len(lines)))}
    )
    out = ["--"] if separate and (before or after) else []
    for k, i in enumerate(shown):
        if k and i != shown[k - 1] + 1:
            out.append("--")
        sep = ":" if i in hits else "-"
        out.append(f"{path}{sep}{i + 1}{sep}{lines[i]}" if numbered else f"{path}{sep}{lines[i]}")
    return out


def _render(lines: list[str], input: GrepInput) -> str:
    mode = _mode(input)
    if mode == "files_with_matches":
        lines = sorted(lines, key=newest_first)
    total = len(lines)
    start = int(input.offset or 0)
    end = start + int(input.head_limit) if input.head_limit else None
    lines = [line[:MAX_LINE_CHARS] for line in lines[start:end]]
    if not total:
        return "No matches found."
    body = "\n".join(lines)
    if mode == "files_with_matches":
        body = f"Found {total} file{'s' if total != 1 else ''}\n{body}"
    if len(body) > MAX_OUTPUT_CHARS:
        body = body[:MAX_OUTPUT_CHARS] + "\n<output truncated; narrow the search or use head_limit>"
    elif end is not None and end < total:
        body += f"\n<showing {start + 1}-{end} of {total}; use offset={end} for more>"
    return body

