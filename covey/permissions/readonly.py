"""Whether a Bash command only reads, so that it runs without asking (Claude Code's read-only commands).

A command is read-only when every part of it (``&&``, ``||``, ``;``, ``|``, ``&``)
is a read-only command (``covey.permissions.readonly_commands``) with arguments that
keep it so, and it writes nowhere: an output redirection other than to ``/dev/null``,
a command or process substitution, a here-document, a subshell, a line break, an
environment assignment, or anything ``shlex`` cannot split makes it not read-only.
``cd`` is read-only into the working directories; ``cd`` elsewhere together with
``git`` is not (git would run that directory's hooks). A command with write-capable
flags (``find``, ``sort``, ``git``...) is not read-only beside an unquoted glob or a
``$`` expansion, which could turn into such a flag. Unknown means not read-only.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Iterable

from covey.permissions.readonly_commands import CHECKS, FLAG_SAFE

MAX_LENGTH = 10_000
"""Longer commands are always asked about, as in Claude Code."""
_REFUSED = re.compile(r"`|\$\(|<\(|>\(|<<|\n")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "|&"})
_OUTPUT = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
_COMMAND = re.compile(r"[A-Za-z0-9_.+-]+")
_QUOTED = re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"")
_GLOB = re.compile(r"[*?\[{]")


def is_read_only(command: str, *, cwd: Path, roots: Iterable[Path] = ()) -> bool:
    """Whether ``command`` (run in ``cwd``) only reads; ``roots``: the working directories."""
    if len(command) > MAX_LENGTH or _REFUSED.search(command):
        return False
    parts = _parts(command)
    if not parts:
        return False
    expanding = bool(_GLOB.search(_QUOTED.sub("", command))) or "$" in command
    directories = [Path(os.path.normpath(cwd)), *(Path(os.path.normpath(r)) for r in roots)]
    here, moved = Path(os.path.normpath(cwd)), False
    for words in parts:
        name, args = words[0], words[1:]
        if name == "cd":
            here = _cd(args, here, directories)
            if here is None:
                return False
            moved = moved or here != Path(os.path.normpath(cwd))
            continue
        if not _COMMAND.fullmatch(name) or name not in CHECKS or not CHECKS[name](args):
            return False
        if expanding and name not in FLAG_SAFE:
            return False
    return not (moved and any(words[0] == "git" for words in parts))


FILESYSTEM_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp"})
"""What ``acceptEdits`` also accepts, as Claude Code does, when every path is in a working directory."""


def is_filesystem_edit(command: str, *, cwd: Path, roots: Iterable[Path] = ()) -> bool:
    """Whether ``command`` is read-only parts and ``mkdir`` / ``touch`` / ``mv`` / ``cp`` of paths
    inside the working directories (no glob, variable or ``cd`` that could move a path elsewhere)."""
    if len(command) > MAX_LENGTH or _REFUSED.search(command) or "$" in command:
        return False
    parts = _parts(command)
    if not parts or _GLOB.search(_QUOTED.sub("", command)):
        return False
    here = Path(os.path.normpath(cwd))
    directories = [here, *(Path(os.path.normpath(r)) for r in roots)]
    edits = [words for words in parts if words[0] in FILESYSTEM_COMMANDS]
    reads = " ; ".join(shlex.join(words) for words in parts if words[0] not in FILESYSTEM_COMMANDS)
    if not edits or any(words[0] == "cd" for words in parts):
        return False
    return all(_inside(words[1:], here, directories) for words in edits) and (
        not reads or is_read_only(reads, cwd=cwd, roots=roots))


def _inside(args: list[str], here: Path, directories: list[Path]) -> bool:
    operands = [a.partition("=")[2] if a.startswith("--target-directory=") else a
                for a in args if not a.startswith("-") or a.startswith("--target-directory=")]
    paths = [Path(os.path.normpath(here / os.path.expanduser(a))) for a in operands]
    return bool(paths) and all(any(p.is_relative_to(d) for d in directories) for p in paths)


def _parts(command: str) -> list[list[str]] | None:
    """The simple commands of ``command`` as word lists, redirections to nowhere removed; None if
    it writes somewhere or cannot be split."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return None
    parts: list[list[str]] = [[]]
    last = ""
    tokens.reverse()
    while tokens:
        token = tokens.pop()
        if token in _SEPARATORS:
            if not parts[-1]:
                return None  # `&& ls`, `ls || | x`: not a command a read would be
            parts.append([])
            last = token
        elif token in _OUTPUT or token == "<":
            target = tokens.pop() if tokens else ""
            if not _harmless_redirect(token, target):
                return None
        elif token and token[0] in "();<>|&":
            return None  # a subshell, `<>`, `;;` ...: more shell than a read needs
        else:
            parts[-1].append(token)
    if not parts[-1]:
        if last not in (";", "&"):
            return None  # a dangling `&&` or `|` waits for more
        parts.pop()
    return parts


def _harmless_redirect(operator: str, target: str) -> bool:
    if operator == "<":
        return bool(target) and target[0] not in "();<>|&"  # reading a file is a read
    return target == "/dev/null" or (operator == ">&" and target.isdigit())


def _cd(args: list[str], here: Path, directories: list[Path]) -> Path | None:
    """Where ``cd ARGS`` goes from ``here``, if that is inside a working directory."""
    if len(args) != 1 or args[0] == "-" or "$" in args[0] or args[0].startswith("~"):
        return None
    target = Path(os.path.normpath(here / args[0]))
    return target if any(target.is_relative_to(d) for d in directories) else None
