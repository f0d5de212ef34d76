"""Whether a Bash command only reads (runs without asking), or is an ``acceptEdits`` filesystem command.

Judged on the parsed command (:mod:`covey.shell.parse`), failing closed: a command is
read-only when the grammar reads all of it, every simple command is a read-only command
whose options are on its allow list (:mod:`covey.permissions.readonly_commands`), it sets no
variable, redirects output nowhere but ``/dev/null``, and every file it reads lies in a
working directory (symlinks resolved). ``cd`` is read-only into the working directories;
``git`` is read-only only where it opens the project's own repository (:mod:`covey.permissions.git_places`). A
command with write-capable options is not read-only beside an unquoted glob, which could
expand to a file named like such an option. Unknown means not read-only.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Iterable

from covey.permissions.git_places import git_elsewhere
from covey.permissions.options import options, parse_options
from covey.permissions.paths import expand, inside, protected_part, real_roots, resolve
from covey.permissions.readonly_commands import ANY_ARGUMENTS, FLAG_SAFE, judge
from covey.shell.parse import MAX_LENGTH, Redirect, ShellScript, SimpleCommand, parse

__all__ = ["MAX_LENGTH", "is_read_only", "not_read_only", "is_filesystem_edit", "not_filesystem_edit"]

_HARMLESS_OUTPUT = frozenset({">", ">>", ">|", "&>", "&>>"})


def is_read_only(command: str, *, cwd: Path, roots: Iterable[Path] = (), home: Path | None = None,
                 readable: Iterable[Path] = ()) -> bool:
    """Whether ``command`` (run in ``cwd``) only reads; ``roots``: the working directories."""
    return not_read_only(parse(command), cwd=cwd, roots=roots, home=home, readable=readable) is None


def not_read_only(script: ShellScript, *, cwd: Path, roots: Iterable[Path] = (), home: Path | None = None,
                  readable: Iterable[Path] = ()) -> str | None:
    """Why ``script`` is not read-only, or None when it is."""
    if not script.understood:
        return "it holds " + ", ".join(dict.fromkeys(script.opaque)) if script.opaque else "it is empty"
    place = _Place(cwd, roots, home, readable)
    repo_roots = real_roots(roots) or (place.start,)
    for command in script.commands:
        if command.words and command.words[0] == "cd":
            if (why := place.cd(command)) is not None:
                return why
            continue
        if (why := _command_reason(command, place)) is not None:
            return why
        if command.words[:1] == ("git",) and (why := git_elsewhere(place.here, repo_roots)) is not None:
            return why
    return None


def _command_reason(command: SimpleCommand, place: "_Place") -> str | None:
    name = command.words[0] if command.words else None
    if command.assignments:
        return f"it sets {command.assignments[0]!r}"
    if name is None or (not command.static and name not in ANY_ARGUMENTS) or (name == "printf" and command.words[1:2] == (None,)):
        return "a word is computed at run time"
    if "/" in name:
        return f"{name!r} is a path to a program"
    check = judge(name)
    if check is None:
        return f"{name!r} is not a read-only command"
    if any(command.globbed[1:]) and name not in FLAG_SAFE:
        return f"an unquoted glob could expand to an option of {name!r}"
    parsed = check([w for w in command.words[1:] if w is not None])
    if parsed is None:
        return f"{name!r} has an option or operand not on its read-only list"
    for redirect in command.redirects:
        if (why := place.redirect(redirect)) is not None:
            return why
    for path in parsed.paths:
        if (why := place.readable(path)) is not None:
            return why
    return None


class _Place:
    """Where the command runs (``cd`` moves it) and which directories it may read."""

    def __init__(self, cwd: Path, roots: Iterable[Path], home: Path | None, readable: Iterable[Path]) -> None:
        self.start = self.here = Path(os.path.realpath(cwd))
        self.roots = real_roots([cwd, *roots])
        self.read_roots = self.roots + real_roots(readable)
        self.home = home or Path.home()

    def cd(self, command: SimpleCommand) -> str | None:
        args = command.words[1:]
        if len(args) != 1 or args[0] in (None, "-") or command.globbed[1] or command.redirects:
            return "cd to a place that is not one plain directory"
        target = resolve(args[0], self.here, self.home)
        if not inside(target, self.roots):
            return f"cd {args[0]!r} leaves the working directories"
        self.here = target
        return None

    def redirect(self, redirect: Redirect) -> str | None:
        if redirect.target is None:
            return "a redirection to a computed target"
        if redirect.operator == "<":
            return self.readable(redirect.target)
        if redirect.operator in (">&", "<&") and (redirect.target.isdigit() or redirect.target == "-"):
            return None
        if redirect.operator in _HARMLESS_OUTPUT and redirect.target == "/dev/null":
            return None
        return f"it writes to {redirect.target!r}"

    def readable(self, path: str) -> str | None:
        for candidate in self._candidates(path):
            if not inside(candidate, self.read_roots):
                return f"it reads {path!r}, outside the working directories"
        return None

    def _candidates(self, path: str) -> list[Path]:
        """The path, and for a glob every file it matches now plus the folder it starts in."""
        if not any(c in path for c in "*?["):
            return [resolve(path, self.here, self.home)]
        pattern = os.path.join(self.here, expand(path, self.home))
        prefix = pattern[:min(pattern.index(c) for c in "*?[" if c in pattern)]
        found = [Path(os.path.realpath(p)) for p in glob.glob(pattern)[:1000]]
        return [Path(os.path.realpath(os.path.dirname(prefix) or "/")), *found]


FILESYSTEM_COMMANDS = {
    "mkdir": options("pv", "m", long="parents verbose", long_valued="mode"),
    "touch": options("acmhf", "dt", long="no-create no-dereference", long_valued="date time"),
    "mv": options("finuvT", "t", long="force interactive no-clobber update verbose no-target-directory "
                  "strip-trailing-slashes", long_valued="target-directory", path_options="-t --target-directory"),
    "cp": options("aRrdfinPpuvTx", "t", long="archive recursive force interactive no-clobber "
                  "no-dereference update verbose no-target-directory one-file-system parents",
                  long_valued="target-directory no-preserve", long_optional="preserve",
                  path_options="-t --target-directory"),
}
"""What ``acceptEdits`` also accepts, as Claude Code does, when every path is in a working directory
(``cp -s`` / ``-l``, ``cp -L`` / ``-H`` that copy what a link outside points to, backups and
``--reflink`` are not on the lists)."""


def is_filesystem_edit(command: str, *, cwd: Path, roots: Iterable[Path] = (), home: Path | None = None) -> bool:
    return not_filesystem_edit(parse(command), cwd=cwd, roots=roots, home=home) is None


def not_filesystem_edit(script: ShellScript, *, cwd: Path, roots: Iterable[Path] = (), home: Path | None = None) -> str | None:
    """Why ``script`` is not read-only parts plus ``mkdir`` / ``touch`` / ``mv`` / ``cp`` of paths inside
    the working directories (no glob, variable, ``cd`` or protected path), or None when it is."""
    if not script.understood:
        return "it holds " + ", ".join(dict.fromkeys(script.opaque))
    place = _Place(cwd, roots, None if home is None else home, ())
    edits = [c for c in script.commands if c.words and c.words[0] in FILESYSTEM_COMMANDS]
    if not edits:
        return "no mkdir, touch, mv or cp"
    for command in script.commands:
        if command in edits:
            if (why := _edit_reason(command, place)) is not None:
                return why
        elif command.words[:1] == ("cd",):
            return "cd moves the paths of the other commands"
        elif (why := _command_reason(command, place)) is not None:
            return why
    return None


def _edit_reason(command: SimpleCommand, place: _Place) -> str | None:
    if command.assignments or command.redirects or not command.static or any(command.globbed):
        return "a filesystem command with variables, redirections or globs"
    name = command.words[0]
    if name is None:  # a static command has every word; this keeps the type honest
        return "a filesystem command with variables, redirections or globs"
    parsed = parse_options(FILESYSTEM_COMMANDS[name], [w for w in command.words[1:] if w is not None])
    if parsed is None:
        return f"{name!r} has an option not on its list"
    targets = parsed.paths  # operands, and -t / --target-directory
    if not targets:
        return f"{name!r} names no path"
    for target in targets:
        path = resolve(target, place.here, place.home)
        if not inside(path, place.roots):
            return f"{target!r} is outside the working directories"
        if (part := protected_part(path, place.roots)) is not None:
            return f"{target!r} is in the protected path {part!r}"
    return None
