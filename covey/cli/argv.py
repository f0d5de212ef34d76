"""How a Claude Code user's command line becomes a covey command, and the prompt a run reads.

Claude Code's ``-p`` is a switch and its prompt the positional argument (``claude -p --model X
"q"``); with no command covey runs the prompt in print mode (it has no interactive mode), so
``covey "q"`` is ``covey -p "q"``. What stdin carries, when it is not a terminal, is joined to
the prompt as Claude Code 2.1.332 joins it (``[prompt, stdin].filter(Boolean).join("\\n")`` in
its ``getInputPrompt``): the prompt argument, a newline, then the piped text. A reader that closes
stdout early (``covey sessions | head -3``) ends the command quietly. Standard library only: the
thin client imports it.
"""

from __future__ import annotations

import argparse
import difflib
import io
import os
import select
import sys
from typing import IO, Any, Sequence

from covey.errors import UserError

RUN_USAGE = "covey [-p] [flags] [prompt]\n       covey COMMAND [flags]"
RUN_DESCRIPTION = ("Claude Code-style agents and sub-agents on Ray. Without a command covey runs the prompt to\n"
                   "its end and prints the result, as claude -p does: covey has no interactive mode, so\n"
                   "`covey \"task\"` is `covey -p \"task\"`.")

PIPE_CLOSED = 141
"""The exit status of a command whose reader went away (128 + SIGPIPE), as a shell reports ``yes | head -1``'s."""
STDIN_WAIT_S = 3.0
"""How long a run waits for the first byte on a stdin that is not a terminal, as Claude Code does:
a parent that started covey without closing stdin would otherwise hold the run forever."""


def as_command(argv: Sequence[str], commands: Sequence[str]) -> list[str]:
    """``argv`` with ``run`` put first unless it names a command: a flag (``-p``, ``--help``,
    ``--version``, the SDKs' ``--output-format ...``) or a bare prompt starts a run. A single
    word that is nearly a command's name is refused, not sent to the model as a prompt."""
    argv = list(argv)
    if not argv or argv[0] in commands:
        return argv
    word = argv[0]
    if not word.startswith("-") and word.strip() == word and " " not in word:
        if near := difflib.get_close_matches(word, commands, n=1, cutoff=0.75):
            raise UserError(f"unknown command {word!r}: did you mean `covey {near[0]}`? "
                            f"(to send it as a prompt: covey -p {word!r})")
    return ["run", *argv]


def prompt_of(argument: str | None, stdin: IO[str] | None = None, wait_s: float = STDIN_WAIT_S) -> str:
    """The run's prompt: the prompt argument, then a newline, then what a piped stdin carries."""
    return "\n".join(part for part in (argument or "", piped_stdin(stdin, wait_s)) if part)


def piped_stdin(stdin: IO[str] | None = None, wait_s: float = STDIN_WAIT_S) -> str:
    """stdin's text when it is not a terminal; "" if nothing came within ``wait_s`` (with a warning)."""
    stream = sys.stdin if stdin is None else stdin
    if stream is None or stream.closed or stream.isatty():
        return ""
    try:
        ready = select.select([stream], [], [], wait_s)[0]
    except (OSError, ValueError, io.UnsupportedOperation):  # no descriptor to wait on (a StringIO): just read
        ready = [stream]
    if not ready:
        print(f"covey: no stdin data received in {wait_s:g} s, proceeding without it "
              f"(redirect stdin from /dev/null to skip the wait)", file=sys.stderr)
        return ""
    try:
        return stream.read()
    except (OSError, ValueError, UnicodeDecodeError) as exc:  # as Claude Code: the prompt argument alone
        print(f"covey: cannot read stdin ({exc}), proceeding without it", file=sys.stderr)
        return ""


class VersionAction(argparse.Action):
    """``--version``: ``0.1.0 (covey)``, as Claude Code prints ``2.1.337 (Claude Code)``; the version
    is looked up only when asked, so no other command pays for it."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        from importlib import metadata

        try:
            version = metadata.version("covey")
        except metadata.PackageNotFoundError:  # run from a source tree that was never installed
            version = "unknown"
        print(f"{version} (covey)")
        parser.exit(0)


def commands_epilog(sub: Any) -> str:
    """The commands, one a line, for the end of ``covey --help``."""
    lines = [f"  {action.dest:<9} {action.help}" for action in sub._get_subactions() if action.dest != "run"]
    return "commands (covey COMMAND --help for a command's flags):\n" + "\n".join(lines)


def stdout_to_devnull() -> None:
    """After a reader closed stdout's pipe, Python's recipe (its docs on SIGPIPE): what is left in
    stdout's buffer goes nowhere, or flushing it at exit would print a second BrokenPipeError."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no descriptor (a test's StringIO): nothing is flushed to a pipe
        pass
