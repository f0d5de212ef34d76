"""The y / n / a(lways) question at a terminal, written once: ``TerminalAsker`` (in-process
runs) and the thin CLI client (served runs) both ask it. Plain Python: no pydantic."""

from __future__ import annotations

import contextlib
from typing import IO, Iterator, Literal

Reply = Literal["yes", "no", "always"]


def converse(stdin: IO[str], stdout: IO[str], *, message: str, reason: str, suggested_rule: str,
             agent_id: str | None = None) -> Reply:
    who = f"[{agent_id}] " if agent_id else ""
    stdout.write(f"\n{who}{message}\n  ({reason})\n")
    stdout.write(f"  y = yes, a = always allow {suggested_rule}, n = no > ")
    stdout.flush()
    answer = stdin.readline().strip().lower()
    if answer in ("a", "always"):
        return "always"
    return "yes" if answer in ("y", "yes") else "no"


@contextlib.contextmanager
def terminal(path: str = "/dev/tty") -> Iterator[tuple[IO[str], IO[str]]]:
    """The controlling terminal, to read and to write. Two handles: a terminal is not
    seekable, and a text file opened ``r+`` must be (``io.UnsupportedOperation``)."""
    with open(path, "r", encoding="utf-8") as reading, open(path, "w", encoding="utf-8") as writing:
        yield reading, writing
