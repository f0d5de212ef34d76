"""The files a Bash command visibly reads and writes, for Claude Code's rule that ``Read`` and
``Edit`` deny rules also cover file commands it recognizes in Bash (``cat .env`` meets
``Read(./.env)``) and output redirections (``echo x > .env`` meets ``Edit(./.env)``), and for
the protected-path check (``echo x > .git/config``).

Read from the parsed command (:mod:`covey.shell.parse`), substitutions included, following
``cd`` from one command to the next, with globs expanded as they would be now. What cannot be
known before the command runs (a target computed from a variable, a ``cd`` to one) is reported as
unknown, and the policy asks. Taking too much for a path (a ``head -n 5`` whose ``5`` is taken for
one) can only deny or ask about what a rule names; a file a program opens by itself (a script) is
out of reach, as in Claude Code (its sandbox is what covers those).
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

from covey.permissions.paths import expand, normal, resolve
from covey.shell.parse import ShellScript, SimpleCommand, parse
from covey.shell.wrappers import basename, runs

READERS = frozenset({
    "cat", "head", "tail", "sed", "less", "more", "nl", "wc", "tac", "sort", "uniq", "cut", "diff", "cmp",
    "strings", "od", "xxd", "hexdump", "base64", "md5sum", "sha1sum", "sha256sum", "sha512sum", "file", "stat", "cp",
    "source", ".", "awk", "jq", "column", "comm", "paste", "tee", "bat", "view", "vim", "nano", "python", "python3",
    "tar", "zip", "scp", "rsync", "readlink", "realpath",
})
"""Commands whose operands are files they read."""
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
"""Commands whose first operand is a pattern and the rest files."""
RECURSIVE = frozenset({"rg", "ag", "ack", "tar", "zip", "rsync", "du", "find", "tree"})
"""Commands that read every file below a folder they are given (``grep`` with ``-r``, ``cp`` with ``-r`` too)."""
WRITERS = frozenset({"tee", "touch", "mkdir", "rm", "rmdir", "ln", "install", "chmod", "chown", "chgrp", "truncate",
                     "cp", "mv", "shred", "unlink", "rsync", "scp"})
"""Commands whose operands are files they write (``cp`` / ``mv``: every operand, to err on the side of asking)."""
_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})


@dataclass
class Files:
    reads: list[Path] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)
    trees: list[Path] = field(default_factory=list)
    """Folders read whole (``grep -r x .``, ``rg x``): a denied file anywhere below counts as read."""
    unknown_reads: str | None = None
    """Why a file it reads cannot be known before the command runs."""
    unknown_writes: str | None = None
    """Why a file it writes cannot be known before the command runs."""
    lost: str | None = None
    """A ``cd`` went somewhere decided at run time: relative paths after it are unknown."""


def bash_files(command: str | ShellScript, cwd: Path, home: Path | None = None) -> tuple[list[Path], list[Path]]:
    """(files read, files written) by ``command`` run in ``cwd``."""
    files = command_files(command, cwd, home)
    return files.reads, files.writes


def command_files(command: str | ShellScript, cwd: Path, home: Path | None = None) -> Files:
    """Every file ``command`` visibly reads and writes, each as written (normalised) and with its
    symlinks resolved, so that a rule on either form applies."""
    script = parse(command) if isinstance(command, str) else command
    home = home or Path.home()
    files, here = Files(), Path(cwd)
    for simple in script.commands:
        if simple.words[:1] in (("cd",), ("pushd",), ("popd",)) and not simple.nested:
            here = _moved(simple, here, home, files)
            continue
        _redirections(simple, here, home, files)
        for words in runs(simple.words).forms:
            _operands(words, simple, here, home, files)
    return files


def _moved(command: SimpleCommand, here: Path, home: Path, files: Files) -> Path:
    args = [w for w in command.words[1:] if w is None or not w.startswith("-")]
    if command.words[0] == "popd" or len(args) != 1 or args[0] is None or command.globbed[-1]:
        files.lost = files.lost or "a cd whose destination is decided at run time"
        return here
    return normal(args[0], here, home)


def _redirections(command: SimpleCommand, here: Path, home: Path, files: Files) -> None:
    for redirect in command.redirects:
        writes = redirect.operator in _WRITE_OPERATORS or (redirect.operator == ">&" and not _descriptor(redirect.target))
        if redirect.operator == "<" or writes:
            kind = "writes" if writes else "reads"
            if redirect.target is None or redirect.globbed:
                _unknown(files, kind, f"the redirection target {redirect.target or 'computed by the shell'!r} is decided at run time")
                if redirect.target is None:
                    continue
            _add(files, kind, redirect.target, redirect.globbed, here, home)


def _operands(words: list[str], command: SimpleCommand, here: Path, home: Path, files: Files) -> None:
    program = basename(words[0])
    operands = [w for w in words[1:] if not w.startswith("-")]
    globbed = any(command.globbed[1:])
    if program in READERS:
        for operand in operands:
            _add(files, "reads", operand, globbed, here, home)
    elif program in _PATTERN_FIRST:
        for operand in operands[1:]:
            _add(files, "reads", operand, globbed, here, home)
    recursive = program in RECURSIVE or (program in ("grep", "egrep", "fgrep", "cp", "scp") and _recursive_flag(words))
    if recursive:
        for operand in (operands[1:] if program in _PATTERN_FIRST else operands) or ["."]:
            files.trees.append(normal(operand, here, home))
    if program in WRITERS:
        for operand in operands + _attached_values(words[1:]):
            _add(files, "writes", operand, globbed, here, home)
        if None in command.words[1:]:
            _unknown(files, "writes", f"{program} writes a file named at run time")
    if program == "sed" and any(w.startswith("-i") or w.startswith("--in-place") for w in words[1:]):
        for operand in operands[1:]:
            _add(files, "writes", operand, globbed, here, home)
    if program == "dd":
        for word in words[1:]:
            if word.startswith(("of=", "if=")):
                _add(files, "writes" if word.startswith("of=") else "reads", word[3:], globbed, here, home)
    if program == "git" and len(words) > 1 and words[1] == "config" and not _config_read(words[2:]):
        _add(files, "writes", "~/.gitconfig" if "--global" in words else ".git/config", False, here, home)


def _attached_values(args: list[str]) -> list[str]:
    """Values glued to an option (``-t.git/hooks``, ``--target=DIR``): for writers, they name files too."""
    values = [a.partition("=")[2] for a in args if a.startswith("--") and "=" in a]
    return values + [a[2:] for a in args if a.startswith("-t") and len(a) > 2 and not a.startswith("--")]


def _recursive_flag(words: list[str]) -> bool:
    return any(w in ("--recursive", "--dereference-recursive", "--archive") or
               (w.startswith("-") and not w.startswith("--") and ("r" in w or "R" in w or "a" in w)) for w in words[1:])


def _config_read(args: list[str]) -> bool:
    reading = {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l"}
    return any(a in reading for a in args)


def _descriptor(target: str | None) -> bool:
    return target is not None and (target.isdigit() or target == "-")


def _unknown(files: Files, kind: str, why: str) -> None:
    attribute = f"unknown_{kind}"
    setattr(files, attribute, getattr(files, attribute) or why)


def _add(files: Files, kind: str, path: str, globbed: bool, here: Path, home: Path) -> None:
    """The path as written and resolved, and for a glob every file it matches now."""
    if not path or path == "/dev/null":
        return
    if files.lost and not expand(path, home).startswith("/"):
        _unknown(files, kind, files.lost)
    found: list[Path] = getattr(files, kind)
    found.extend((normal(path, here, home), resolve(path, here, home)))
    if globbed and any(c in path for c in "*?["):
        for match in glob.glob(os.path.join(here, expand(path, home)))[:1000]:
            found.extend((normal(match, here, home), resolve(match, here, home)))
