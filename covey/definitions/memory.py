"""Persistent agent memory: a definition's ``memory`` (``user``, ``project`` or ``local``) gives its
agents a folder of notes kept between runs, as Claude Code's does (docs/definitions.md#agent-memory).

The folder's ``MEMORY.md`` opens the agent's system prompt section on memory, with covey's own
instructions to keep it; the agent reads and writes the folder with its file tools, unasked.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal, Mapping

from covey.definitions.tool_catalog import tool_names_where
from covey.plugins.installed import config_dir

MemoryScope = Literal["user", "project", "local"]
INDEX = "MEMORY.md"
MAX_INDEX_LINES = 200
"""How much of ``MEMORY.md`` goes into the system prompt, in lines and in bytes."""
MAX_INDEX_BYTES = 25_000
MEMORY_TOOLS = tool_names_where(lambda tool: tool.memory)
"""The tools an agent with memory always gets (unless its ``disallowedTools`` names them)."""

_SCOPES = {
    "user": "yours across every project, on this machine only",
    "project": "this project's, kept in its .claude folder and shared with everyone who checks it out",
    "local": "this project's on this machine only, not meant for version control",
}


def memory_dir(name: str, scope: MemoryScope, *, project: Path, env: Mapping[str, str] | None = None) -> Path:
    """Where an agent type's memory lives: ``<config>/agent-memory/<name>`` for ``user`` (the config
    folder is ``CLAUDE_CONFIG_DIR``, else ``~/.claude``), ``<project>/.claude/agent-memory/<name>``
    for ``project``, ``<project>/.claude/agent-memory-local/<name>`` for ``local``."""
    env = os.environ if env is None else env
    folder = _folder_name(name)
    if scope == "user":
        home = Path(env.get("HOME") or Path.home())
        return config_dir(home, env) / "agent-memory" / folder
    sub = "agent-memory" if scope == "project" else "agent-memory-local"
    return project / ".claude" / sub / folder


def linked_below(folder: Path, project: Path) -> bool:
    """Whether any folder from ``project`` (exclusive) down to ``folder`` is a symbolic link, so
    that the memory folder is not where its path says."""
    try:
        parts = folder.relative_to(project).parts
    except ValueError:
        return True
    for depth in range(1, len(parts) + 1):
        if project.joinpath(*parts[:depth]).is_symlink():
            return True
    return False


def _folder_name(name: str) -> str:
    """An agent type as one safe folder name (a plugin's ``kit:reviewer`` is ``kit-reviewer``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", name).strip(".") or "agent"


def memory_prompt(name: str, scope: MemoryScope, directory: Path) -> str:
    """The system prompt's section on memory: what the folder is, how to keep it, and its index."""
    return "\n\n".join([_instructions(name, scope, directory), _index(directory)])


def _instructions(name: str, scope: MemoryScope, directory: Path) -> str:
    private = "" if scope != "project" else " It is shared: write nothing private or secret in it."
    return (
        "# Your memory\n\n"
        f"Every {name!r} agent shares a memory folder that outlives this conversation: {directory} "
        f"({scope} memory: {_SCOPES[scope]}).{private} Read, Write and Edit work there without asking.\n\n"
        "- Before you start, look at what earlier runs left there; it may save you work.\n"
        "- As you work, keep what a later run would want to know: conventions you found, where things "
        "are, what failed and why. Leave out the details of this one task.\n"
        f"- {INDEX} is the index. Its first {MAX_INDEX_LINES} lines are put in front of every run "
        "(below), so keep it short: one line per note, details in other files of the folder that it names.\n"
        "- When a note turns out wrong or stale, fix it or delete it; do not pile up contradictions."
    )


def _index(directory: Path) -> str:
    path = directory / INDEX
    if not path.is_file():  # a FIFO or a folder named MEMORY.md is not opened
        return f"## {INDEX}\n\n({INDEX} does not exist yet: create it when you have something worth keeping.)"
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_INDEX_BYTES + 1)
    except OSError as exc:
        return f"## {INDEX}\n\n({INDEX} could not be read: {exc.strerror or exc}.)"
    text = raw[:MAX_INDEX_BYTES].decode("utf-8", errors="replace")
    lines = text.splitlines()
    shown = "\n".join(lines[:MAX_INDEX_LINES])
    if len(lines) > MAX_INDEX_LINES or len(raw) > MAX_INDEX_BYTES:
        shown += (f"\n\n(Only the start of {INDEX} is shown: it is longer than {MAX_INDEX_LINES} lines or "
                  f"{MAX_INDEX_BYTES} bytes. Move details out of it into other files.)")
    return f"## {INDEX}\n\n{shown or '(empty)'}"
