"""Whether a run trusts its project folder, and the one line that says what an untrusted folder's
files had their grants set aside.

A folder is trusted when the person trusted it (``covey trust``, or Claude Code's trust dialog),
for one run with ``--trust`` (``Session(trust=True)``), or when a claude-agent-sdk program named
its setting sources itself: that program chose, for its own run, which files to read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from covey.trust.store import TrustStore

SDK_ENTRYPOINT = "CLAUDE_CODE_ENTRYPOINT"
"""Set by claude-agent-sdk (``sdk-py``, ``sdk-ts``) on the CLI it starts."""


@dataclass(frozen=True)
class Trust:
    """A run's answer for its project folder."""

    folder: Path
    trusted: bool
    why: str
    """What decided: the record, the flag, the program; or why not."""
    approved: frozenset[str] = frozenset()
    """The ``.mcp.json`` servers the person approved outside the repository (``*``: every one)."""


TRUSTED = Trust(Path("/"), True, "trusted by the caller")
"""For code that loads files the person named themselves (tests of loaders, ``--settings``)."""


def decide(folder: Path, *, home: Path, env: Mapping[str, str], flag: bool | None = None,
           setting_sources: Sequence[str] | None = None) -> Trust:
    """Whether the run in ``folder`` trusts the files its project ships. The records are the person's:
    those in ``home`` (the run's), and those in this process's own home when a program gave its run
    another one (``Session(env={"HOME": ...})`` is still the same person's program)."""
    stores = [TrustStore(path) for path in dict.fromkeys([Path(home), Path.home()])]
    approved = frozenset(name for store in stores for name in store.approved(folder))
    if flag:
        return Trust(folder, True, "trusted for this run (--trust)", approved)
    if setting_sources is not None and env.get(SDK_ENTRYPOINT, "").startswith("sdk"):
        return Trust(folder, True, "the claude-agent-sdk program chose its setting sources", approved)
    why = next((reason for store in stores if (reason := store.trusted_by(folder))), None)
    if why:
        return Trust(folder, True, why, approved)
    return Trust(folder, False, "not trusted", approved)


@dataclass
class SetAside:
    """What an untrusted folder's files would have granted, as it is set aside: by the file it
    was written in, each kind of grant once."""

    found: dict[str, list[str]] = field(default_factory=dict)

    def add(self, what: str, where: str) -> None:
        what, where = printable(what), printable(where)  # a repository's names: one line stays one line
        kinds = self.found.setdefault(where, [])
        if what not in kinds:
            kinds.append(what)

    def line(self, folder: Path) -> str | None:
        """The run's one stderr line (without ``covey: ``), or None when nothing was set aside."""
        if not self.found:
            return None
        parts = [f"{_short(where, folder)}: {', '.join(kinds)}" for where, kinds in self.found.items()]
        return (f"{folder} is not a trusted folder: set aside what its files grant: {'; '.join(parts)}. "
                f"Trust it with `covey trust {folder}` (or --trust for one run)")


def printable(text: str) -> str:
    """``text`` with control characters (a newline in a server's name) shown escaped, as a
    repository chose them: a line covey prints about its files cannot fake another line."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def _short(where: str, folder: Path) -> str:
    """A place inside the folder, relative to it."""
    prefix = f"{folder}/"
    return where[len(prefix):] if where.startswith(prefix) else where
