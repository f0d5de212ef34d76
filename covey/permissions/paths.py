"""Paths as the permission checks see them: ``~`` as the run's HOME, symlinks resolved, the
working directories, and the protected paths no mode writes without a targeted approval.

Every path rule and working-directory check uses :func:`resolve`, so ``link/x`` whose
``link`` points outside the project is outside, and an ``alias`` of ``.env`` is ``.env``.
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from pathlib import Path
from typing import Iterable

PROTECTED_DIRECTORIES = frozenset({".git", ".claude", ".covey", ".vscode", ".idea", ".husky", ".ssh", ".gnupg"})
"""Claude Code's protected directories (``.git``, ``.claude``, ``.vscode``, ``.idea``, ``.husky``), covey's own
settings folder, and the user's keys."""
PROTECTED_FILES = frozenset({
    ".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".mcp.json", ".claude.json",
    ".envrc", ".inputrc", ".netrc", ".npmrc", ".pypirc",
})
"""Shell start-up files and tool configurations that run code or hold credentials."""


def expand(path: str, home: Path) -> str:
    """``~`` and ``~/x`` against the run's HOME (``~user`` as the account database says)."""
    if path == "~" or path.startswith("~/"):
        return str(home) + path[1:]
    return os.path.expanduser(path) if path.startswith("~") else path


def resolve(path: str | Path, base: Path, home: Path) -> Path:
    """Absolute, normalised, with every existing symlink on the way resolved."""
    joined = os.path.join(base, expand(str(path), home))
    return Path(os.path.realpath(joined))


def normal(path: str | Path, base: Path, home: Path) -> Path:
    """Absolute and normalised as written (no symlink resolved): what a deny rule also sees."""
    return Path(os.path.normpath(os.path.join(base, expand(str(path), home))))


def inside(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def real_roots(roots: Iterable[Path]) -> tuple[Path, ...]:
    """The working directories with their own symlinks resolved (``/tmp`` may be a link). A root's
    resolution is kept for the rest of the second it was made in: every decision resolves the same
    few roots many times, and a root's own links do not move between the parts of one command."""
    second = int(time.monotonic())
    return tuple(dict.fromkeys(_real_root(str(root), second) for root in roots))


@lru_cache(maxsize=256)
def _real_root(root: str, second: int) -> Path:
    return Path(os.path.realpath(root))


CLAUDE_EDITABLE = frozenset({"commands", "agents", "skills"})
"""Folders of ``.claude`` that Claude Code lets every mode write as any other file: a project's own
commands, agents and skills (``.claude/settings.json`` and the rest stay protected)."""


def protected_part(path: Path, roots: Iterable[Path], *, insensitive: bool | None = None) -> str | None:
    """The protected directory or file ``path`` is or lies in, or None. Inside a working directory only the
    part below it counts (a project may itself sit under a folder named like one). Names compare without
    case where the file system does (``.GIT/config`` is ``.git/config`` on macOS); ``insensitive``: that
    answer given, else probed (:func:`case_insensitive`)."""
    base = next((root for root in roots if path.is_relative_to(root)), None)
    parts = path.relative_to(base).parts if base is not None else path.parts
    fold = case_insensitive(base or path.parent) if insensitive is None else insensitive
    names = [part.lower() for part in parts] if fold else list(parts)
    for i, name in enumerate(names[:-1]):
        if name == ".claude" and i + 2 < len(names) and names[i + 1] in CLAUDE_EDITABLE:
            return None
        if name in PROTECTED_DIRECTORIES:
            return parts[i]
    if names and (names[-1] in PROTECTED_DIRECTORIES or names[-1] in PROTECTED_FILES):
        return parts[-1]
    return None


@lru_cache(maxsize=512)
def case_insensitive(directory: Path) -> bool:
    """Whether names in ``directory``'s file system compare without case: on Windows always; elsewhere
    the nearest existing folder (or a parent of it) whose name has letters is looked up with its
    letters' case swapped, and counts as case-insensitive when that finds the same folder. Cached per folder."""
    if os.name == "nt":
        return True
    folder = Path(os.path.abspath(directory))
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        if candidate.name != candidate.name.swapcase():
            try:
                return os.path.samefile(candidate, candidate.with_name(candidate.name.swapcase()))
            except OSError:
                return False
    return False
