"""``Read`` deny rules reach into search results: a Grep or Glob over a folder never shows a file
a ``Read(...)`` deny rule covers (``Read(./.env)`` keeps ``.env``'s lines out of a Grep of ``.``).

The policy says which paths are denied; this module finds them below a search root so that the
search skips them (Grep then runs its own search, which filters exactly; Glob filters its matches).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

from covey.tools.base import ToolContext

Denied = Callable[[str], bool]

MAX_WALK = 200_000
"""Entries looked at below one root; past it the search is refused rather than risk showing a denied file."""


class TooLargeToFilter(RuntimeError):
    """The tree is too large to check every file against the Read deny rules."""


def read_denied(ctx: ToolContext) -> Denied | None:
    """Whether a path is covered by a ``Read`` deny rule of this agent, or None when it has none."""
    spec = ctx.services.spec
    policy = getattr(spec, "permissions", None) if spec is not None else None
    if policy is None or not policy.has_read_denials():
        return None
    denied: Denied = policy.read_denied
    return denied


def denied_below(root: Path, denied: Denied, skip: Iterable[str] = ()) -> list[str]:
    """The files and folders below ``root`` (relative paths) that ``denied`` covers; a denied folder
    is listed once and not entered."""
    skipped, found, seen = set(skip), [], 0
    for dirpath, dirnames, filenames in os.walk(root):
        seen += len(dirnames) + len(filenames)
        if seen > MAX_WALK:
            raise TooLargeToFilter(f"more than {MAX_WALK:,} entries below {root}: narrow the path")
        kept = []
        for name in sorted(dirnames):
            full = os.path.join(dirpath, name)
            if name in skipped:
                continue
            if denied(full):
                found.append(os.path.relpath(full, root))
            else:
                kept.append(name)
        dirnames[:] = kept
        found += [os.path.relpath(os.path.join(dirpath, n), root) for n in filenames if denied(os.path.join(dirpath, n))]
    return found


def without_denied(paths: Iterable[str], denied: Denied | None) -> list[str]:
    return list(paths) if denied is None else [p for p in paths if not denied(p)]
