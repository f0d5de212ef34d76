"""What the checks mixed into ``PermissionPolicy`` (``FileChecks``, ``BashChecks``) use of the
policy: its state and the three decisions it makes. A Protocol, so each mixin is type-checked
against it without importing the policy (which is built from the mixins)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Mapping, Protocol

from covey.permissions.decisions import Ask, Decision, PermissionMode
from covey.permissions.rules import PathContext, Rule

Behavior = Literal["allow", "deny", "ask"]


class PolicyHost(Protocol):
    mode: PermissionMode
    rules: dict[Behavior, list[Rule]]
    where: PathContext
    additional_directories: tuple[Path, ...]
    readable: tuple[Path, ...]
    block_outside_reads: bool
    memory_dirs: tuple[Path, ...]

    def working_directories(self) -> tuple[Path, ...]:
        """The project, the cwd and ``--add-dir``'s, with their symlinks resolved."""
        ...

    def _first(self, behavior: Behavior, tool_name: str, subject: str | None,
               input: Mapping[str, Any] | None = None) -> Rule | None:
        """The first rule of ``behavior`` that covers the call."""
        ...

    def _ask(self, call: dict[str, Any], why: str) -> Ask:
        """The question a person is asked about the call, and why."""
        ...

    def _by_mode(self, call: dict[str, Any], read_only: bool, why: str = "no rule allows it") -> Decision:
        """The mode's verdict on a call no rule decided."""
        ...
