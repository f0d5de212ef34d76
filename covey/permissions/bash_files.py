"""The files a Bash command visibly reads and writes, for Claude Code's rule that ``Read`` and
``Edit`` deny rules also cover file commands it recognizes in Bash (``cat .env`` meets
``Read(./.env)``) and output redirections (``echo x > .env`` meets ``Edit(./.env)``), and for
the protected-path check (``echo x > .git/config``).

Read from the parsed command (:mod:`covey.permissions.shell`), substitutions included. Taking
too much for a path (a ``head -n 5`` whose ``5`` is taken for one) can only deny or ask about
what a rule names; a file a program opens by itself (a script) is out of reach, as in Claude
Code (its sandbox is what covers those).
"""

from __future__ import annotations

from pathlib import Path

from covey.permissions.paths import normal, resolve
from covey.permissions.shell import Script, SimpleCommand, parse

READERS = frozenset({
    "cat", "head", "tail", "sed", "less", "more", "nl", "wc", "tac", "sort", "uniq", "cut", "diff", "cmp",
    "strings", "od", "xxd", "hexdump", "base64", "md5sum", "sha1sum", "sha256sum", "sha512sum", "file", "stat", "cp",
    "source", ".", "awk", "jq", "column", "comm", "paste", "tee", "bat", "view", "vim", "nano", "python", "python3",
})
"""Commands whose operands are files they read."""
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
"""Commands whose first operand is a pattern and the rest files."""
WRITERS = frozenset({"tee", "touch", "mkdir", "rm", "rmdir", "ln", "install", "chmod", "chown", "chgrp", "truncate",
                     "cp", "mv", "shred", "unlink"})
"""Commands whose operands are files they write (``cp`` / ``mv``: every operand, to err on the side of asking)."""
WRAPPERS = frozenset({"time", "nohup", "command", "builtin", "noglob", "nice", "timeout", "stdbuf", "xargs", "env",
                      "sudo", "doas", "exec", "ionice", "setsid", "unbuffer", "chroot", "watch", "strace", "flock"})
"""Run the command that follows (their options, durations and assignments are skipped)."""
_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>"})


def unwrapped(command: SimpleCommand) -> list[list[str]]:
    """The command's static words, then each form with a leading wrapper set aside
    (``sudo rm -rf x`` is also ``rm -rf x``; ``/bin/rm`` is also ``rm``)."""
    words = [w for w in command.words if w is not None]
    forms: list[list[str]] = []
    while words and len(forms) < 8:
        forms.append(words)
        if "/" in words[0] and words[0].rsplit("/", 1)[-1]:
            forms.append([words[0].rsplit("/", 1)[-1], *words[1:]])
        if words[0].rsplit("/", 1)[-1] not in WRAPPERS:
            break
        rest = words[1:]
        # A wrapper's own options, assignments and numbers (`timeout -s 9 30`, `env A=1`, `nice -n 5`).
        while rest and (rest[0].startswith("-") or "=" in rest[0] or rest[0].replace(".", "").rstrip("smhd").isdigit()):
            rest = rest[1:]
        words = rest
    return forms


def bash_files(command: str | Script, cwd: Path, home: Path | None = None) -> tuple[list[Path], list[Path]]:
    """(files read, files written) by ``command`` run in ``cwd``: each as written (normalised) and
    with its symlinks resolved, so that a rule on either form applies."""
    reads, writes = bash_operands(command)
    home = home or Path.home()
    both = lambda paths: list(dict.fromkeys(p for path in paths for p in (normal(path, cwd, home), resolve(path, cwd, home))))
    return both(reads), both(writes)


def bash_operands(command: str | Script) -> tuple[list[str], list[str]]:
    """(files read, files written: output redirection targets but ``/dev/null``, writers' operands) as written."""
    script = parse(command) if isinstance(command, str) else command
    reads: list[str] = []
    writes: list[str] = []
    for simple in script.commands:
        for redirect in simple.redirects:
            if redirect.target is None:
                continue
            if redirect.operator == "<":
                reads.append(redirect.target)
            elif redirect.operator in _WRITE_OPERATORS or (redirect.operator == ">&" and not redirect.target.isdigit()
                                                          and redirect.target != "-"):
                writes.append(redirect.target)
        for words in unwrapped(simple):
            _operands(words, reads, writes)
    return [r for r in reads if r], [w for w in writes if w and w != "/dev/null"]


def _operands(words: list[str], reads: list[str], writes: list[str]) -> None:
    program = words[0].rsplit("/", 1)[-1]
    operands = [w for w in words[1:] if not w.startswith("-")]
    if program in READERS:
        reads.extend(operands)
    elif program in _PATTERN_FIRST:
        reads.extend(operands[1:])
    if program in WRITERS:
        writes.extend(operands)
        writes.extend(w.partition("=")[2] for w in words[1:] if w.startswith("--target-directory="))
    if program == "sed" and any(w.startswith("-i") or w.startswith("--in-place") for w in words[1:]):
        writes.extend(operands[1:])
    if program == "dd":
        writes.extend(w[3:] for w in words[1:] if w.startswith("of="))
        reads.extend(w[3:] for w in words[1:] if w.startswith("if="))
