"""Which commands read only, and which of their flags would write or run something.

The set follows Claude Code's built-in read-only commands (``ls``, ``cat``, ``echo``,
``pwd``, ``head``, ``tail``, ``grep``, ``find``, ``wc``, ``which``, ``diff``, ``stat``,
``du``, ``cd`` and the read-only forms of ``git``) plus a few of the same kind. A
command not here is not read-only: unknown means a person is asked.
"""

from __future__ import annotations

from typing import Callable

Check = Callable[[list[str]], bool]
"""Whether these arguments keep the command read-only."""

FLAG_SAFE = frozenset({
    "cat", "head", "tail", "wc", "pwd", "echo", "printf", "grep", "egrep", "fgrep", "ls", "which", "diff",
    "stat", "du", "df", "basename", "dirname", "realpath", "readlink", "whoami", "id", "uname", "nl", "cut",
    "tr", "comm", "cmp", "printenv", "true", "false", "md5sum", "sha1sum", "sha256sum", "column", "jq", "type",
})
"""Commands none of whose flags writes a file or runs a program: their arguments may
hold unquoted globs (``ls *.ts``, ``wc -l src/*.py``)."""


def _without(*flags: str) -> Check:
    """Read-only unless one of ``flags`` is given: ``--output`` also as ``--output=x``; a short
    ``-o`` anywhere in a cluster of short options (``-ro``, ``-ofile``), erring on the side of asking."""
    long = {f for f in flags if f.startswith("--")}
    short = {f[1] for f in flags if not f.startswith("--")}

    def check(args: list[str]) -> bool:
        for arg in args:
            if arg.partition("=")[0] in long:
                return False
            if arg.startswith("-") and not arg.startswith("--") and short.intersection(arg[1:]):
                return False
        return True
    return check


def _at_most_one_operand(args: list[str]) -> bool:
    """``uniq IN OUT`` writes OUT."""
    return len([a for a in args if not a.startswith("-")]) <= 1


def _no_operand(args: list[str]) -> bool:
    """``hostname NAME`` sets the host name."""
    return all(a.startswith("-") for a in args)


def _find(args: list[str]) -> bool:
    writes = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
    return not writes.intersection(args)


GIT_READERS = frozenset({
    "status", "log", "diff", "show", "blame", "shortlog", "describe", "rev-parse", "ls-files", "ls-tree",
    "cat-file", "merge-base", "show-ref", "rev-list", "grep", "count-objects", "name-rev", "for-each-ref",
})
_GIT_WRITE_FLAGS = _without("--output", "--ext-diff", "-O", "--open-files-in-pager")
_BRANCH_LISTING = frozenset({"-a", "-r", "-v", "-vv", "--all", "--remotes", "--verbose", "--list", "-l", "--show-current"})


def _git(args: list[str]) -> bool:
    """``git SUBCOMMAND ...`` with a subcommand that only reads. A global option before the
    subcommand (``-c core.pager=...``, ``-C dir``) can run a program or change directory: asked."""
    if not args:
        return False
    sub, rest = args[0], args[1:]
    if sub in GIT_READERS:
        return _GIT_WRITE_FLAGS(rest)
    listing = {
        "branch": lambda: set(rest) <= _BRANCH_LISTING,
        "tag": lambda: not rest or rest[0] in ("-l", "--list"),
        "remote": lambda: not rest or rest in (["-v"], ["--verbose"]) or rest[0] == "get-url",
        "stash": lambda: bool(rest) and rest[0] in ("list", "show"),
        "config": lambda: bool(rest) and rest[0] in ("--get", "--get-all", "--get-regexp", "--list", "-l"),
        "reflog": lambda: not rest or rest[0] == "show",
    }.get(sub)
    return bool(listing and listing())


CHECKS: dict[str, Check] = {
    **{name: (lambda args: True) for name in FLAG_SAFE},
    "find": _find,
    "sort": _without("-o", "--output", "--compress-program"),
    "rg": _without("--pre"),
    "tree": _without("-o"),
    "file": _without("-m", "--magic-file", "-f", "--files-from", "-C", "--compile"),
    "date": _without("-s", "--set"),
    "uniq": _at_most_one_operand,
    "hostname": _no_operand,
    "git": _git,
}
"""Every read-only command but ``cd`` (which depends on where it goes) -> its argument check."""
