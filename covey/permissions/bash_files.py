"""The files a Bash command visibly reads and writes, for Claude Code's rule that ``Read`` and
``Edit`` deny rules also cover file commands it recognizes in Bash (``cat .env`` meets
``Read(./.env)``) and output redirections (``echo x > .env`` meets ``Edit(./.env)``).

Only deny rules use this, so reading too much (a ``head -n 5`` whose ``5`` is taken for a
path) can only deny what a deny rule names; a file a program opens by itself (a script) is
out of reach, as in Claude Code (its sandbox is what covers those).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

READERS = frozenset({
    "cat", "head", "tail", "sed", "less", "more", "nl", "wc", "tac", "sort", "uniq", "cut", "diff", "cmp",
    "strings", "od", "xxd", "hexdump", "base64", "md5sum", "sha256sum", "file", "stat", "cp", "source", ".",
})
"""Commands whose operands are files they read."""
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg"})
"""Commands whose first operand is a pattern and the rest files."""
_WRAPPERS = frozenset({"time", "nohup", "command", "builtin", "noglob", "nice", "timeout", "stdbuf", "xargs", "env", "sudo"})
"""Run the command that follows (their options and durations are skipped)."""
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "|&", "(", ")"})
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>"})


def bash_files(command: str, cwd: Path) -> tuple[list[Path], list[Path]]:
    """(files read, files written) by ``command`` run in ``cwd``, as absolute paths."""
    reads, writes = bash_operands(command)
    return _absolute(reads, cwd), _absolute(writes, cwd)


def bash_operands(command: str) -> tuple[list[str], list[str]]:
    """(files read, output redirection targets but ``/dev/null``) as written."""
    try:
        lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return [], []
    reads: list[str] = []
    writes: list[str] = []
    program: str | None = None
    operands = 0
    for i, token in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token in _SEPARATORS:
            program = None
        elif token in _WRITES or (token == ">&" and not following.isdigit()):
            writes.append(following)
        elif token == "<":
            reads.append(following)
        elif i > 0 and (tokens[i - 1] in _WRITES or tokens[i - 1] in ("<", ">&")):
            continue  # the target just taken
        elif program is None or program in _WRAPPERS:
            if not (token.startswith("-") or "=" in token or token[:1].isdigit()):
                program, operands = os.path.basename(token), 0
        elif not token.startswith("-") and (program in READERS or program in _PATTERN_FIRST):
            operands += 1
            if program in READERS or operands > 1:
                reads.append(token)
    return [r for r in reads if r], [w for w in writes if w and w != "/dev/null"]


def _absolute(paths: list[str], cwd: Path) -> list[Path]:
    return [Path(os.path.normpath(cwd / os.path.expanduser(p))) for p in paths if p]
