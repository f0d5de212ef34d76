"""Where git would find its repository, and whether that is the project's own.

A folder git reads as a repository runs programs through its config (``core.fsmonitor``,
``core.hooksPath``, ``core.pager``, ``diff.external``, ``filter.*``, ``alias.*`` with ``!``,
``include.path`` …), so a read-only git subcommand is read-only only where git would open the
repository a working directory lives in: the one whose ``.git`` is at a working directory's root,
or a repository above it (the user's, outside the project). A ``.git`` (folder or file) or a bare
repository's layout (``HEAD`` beside ``objects`` or ``refs``) anywhere below the root — a vendored
folder, a file a model wrote — is elsewhere, and so is a bare layout at the root itself.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable


def discovered(start: Path) -> tuple[Path, bool] | None:
    """The folder git would take for its repository from ``start`` (walking up as git does), and
    whether it was found by its ``.git`` (False: ``start`` or a parent looks like a bare repository)."""
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return folder, True
        if looks_like_git_dir(folder):
            return folder, False
    return None


def looks_like_git_dir(folder: Path) -> bool:
    """A bare repository's layout, counted generously: ``HEAD`` with ``objects``, ``refs`` or ``commondir``."""
    return os.path.lexists(folder / "HEAD") and any(
        os.path.lexists(folder / name) for name in ("objects", "refs", "commondir"))


def git_elsewhere(here: Path, roots: Iterable[Path]) -> str | None:
    """Why git run in ``here`` would open a repository other than a working directory's own, or None."""
    found = discovered(here)
    if found is None:
        return None  # no repository: git reads no repository's config
    repo, by_dot_git = found
    for root in roots:
        if here.is_relative_to(root) and (repo == root and by_dot_git or root.is_relative_to(repo) and repo != root):
            return None
    return f"git in {str(here)!r} would open the repository at {str(repo)!r}, not the project's, and run what its config names"
