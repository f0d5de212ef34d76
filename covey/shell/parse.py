"""A Bash command as the shell will read it: tree-sitter's bash grammar, judged fail-closed.

tree-sitter is the maintained bash grammar (the one Claude Code uses) and never raises: what it
cannot read is an ``ERROR`` node, counted as not understood (``shlex`` takes ``#`` in ``a#b`` for a
comment). :func:`parse` returns a :class:`ShellScript`: every simple command, substitutions and the first
line of a here-document included, with its words after quote removal, and ``opaque``: the constructs
the judge does not fully read. Nothing opaque is read-only or allowed by a rule; deny rules see every
simple command inside it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from covey.shell.commands import Redirect, ShellScript, SimpleCommand
from covey.shell.walk import read
from covey.shell.wrappers import runs

__all__ = ["MAX_LENGTH", "Redirect", "ShellScript", "SimpleCommand", "parse"]

MAX_LENGTH = 10_000
"""Longer commands are not judged: they are asked about, as in Claude Code."""


def parse(command: str) -> ShellScript:
    """The simple commands of ``command`` and what in it is opaque (cached: a gate asks often)."""
    return _parse(command, 0)


@lru_cache(maxsize=2048)
def _parse(command: str, depth: int) -> ShellScript:
    script = ShellScript()
    if len(command) > MAX_LENGTH:
        script.opaque.append(f"longer than {MAX_LENGTH:,} characters")
        script.broken = "it is too long to judge"
        return script
    if "\0" in command:
        script.opaque.append("a NUL character")
        script.broken = "it holds a NUL character"
        return script
    if _ODD_CHARACTER.search(command) or any(c.isspace() and c not in " \t\n" for c in command):
        # Bash reads a CR, FF or VT as part of a word; the grammar as a blank (`a\r# ; rm x`, `\\\r\n`).
        script.opaque.append("a control character the grammar and bash read differently")
        script.broken = "it holds a control character the grammar and bash read differently"
    read(command, script)
    if depth < 3:
        _inner_scripts(script, depth)
    return script


_ODD_CHARACTER = re.compile(r"[\x01-\x08\x0b-\x1f\x7f]")


def _inner_scripts(script: ShellScript, depth: int) -> None:
    """Deny rules must see ``rm`` in ``bash -c 'rm -rf x'``, ``sudo bash -c …``, ``eval "rm -rf x"``."""
    for command in list(script.commands):
        found = runs(command.words)
        script.computed = script.computed or found.computed
        for code in found.codes:
            inner = _parse(code, depth + 1)
            script.commands.extend(SimpleCommand(**{**c.__dict__, "nested": True}) for c in inner.commands)
            script.broken = script.broken or inner.broken
            script.computed = script.computed or inner.computed
            if inner.opaque:
                script.opaque.append("shell code handed to another shell")
