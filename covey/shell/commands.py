"""What the judge reads out of a Bash command: its simple commands, their words and redirections,
and what in it is opaque (:mod:`covey.shell.parse` fills these in)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Redirect:
    operator: str
    """``>``, ``>>``, ``<``, ``&>``, ``>&``, ``<&``, ``>|``, ``<>``, ``&>>``."""
    target: str | None
    """The destination after quote removal; None when it is computed at run time."""
    descriptor: str | None = None
    globbed: bool = False
    """The target holds an unquoted glob or ``~``: where it lands is decided at run time."""


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[str | None, ...]
    """Name and arguments after quote removal; None where a word is computed at run time."""
    source: str
    """The command's text as written (its redirections excluded)."""
    assignments: tuple[str, ...] = ()
    """``NAME=value`` prefixes as written."""
    redirects: tuple[Redirect, ...] = ()
    globbed: tuple[bool, ...] = ()
    """Per word: an unquoted glob, brace or ``~`` the shell expands."""
    nested: bool = False
    """Inside a substitution, a function or a compound statement."""

    @property
    def name(self) -> str | None:
        return self.words[0] if self.words else None

    @property
    def static(self) -> bool:
        return all(w is not None for w in self.words)

    def text(self) -> str:
        """The words joined by spaces (dynamic words as written): what a rule is matched against."""
        return " ".join(w if w is not None else "\0" for w in self.words)


@dataclass
class ShellScript:
    commands: list[SimpleCommand] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    """Why the judge cannot read it all (empty: fully understood)."""
    broken: str | None = None
    """Why commands may be missing from ``commands`` (the grammar failed, or bash would read a
    character differently): no rule can be checked against what is not seen."""
    computed: str | None = None
    """Why a command it runs is decided at run time (``sudo $CMD``, ``bash -c "$X"``, ``… | bash``)."""

    @property
    def understood(self) -> bool:
        return not self.opaque and bool(self.commands)
