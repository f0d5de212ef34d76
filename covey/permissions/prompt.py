"""The y / n / a(lways) question at a terminal, written once: ``TerminalAsker`` (in-process
runs) and the thin CLI client (served runs) both ask it. Plain Python: no pydantic."""

from __future__ import annotations

from typing import IO, Literal

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
