"""A policy's checks on files: paths resolved (symlinks, the run's ``~``), the working directories,
Read/Edit deny rules that reach other tools, protected paths, reads outside the working directories.

A mixin of :class:`covey.permissions.policy.PermissionPolicy` (it uses the policy's rules,
``where`` and ``_first``); kept apart so that each file reads as one concern.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from covey.permissions.bash_files import Files, command_files
from covey.permissions.decisions import Allow, Decision, Deny, describe_call
from covey.permissions.paths import inside, protected_part, real_roots, resolve
from covey.permissions.rules import Rule
from covey.permissions.tool_traits import EDIT_TOOLS, READ_TOOLS
from covey.shell.parse import ShellScript

if TYPE_CHECKING:
    from covey.permissions.host import PolicyHost as _Base
else:
    _Base = object


MAX_TREE_ENTRIES = 200_000
"""Entries looked at below a folder a Bash command searches; past it, a Read deny rule counts as met."""


class FileChecks(_Base):
    def working_directories(self) -> tuple[Path, ...]:
        """The project, the cwd and ``--add-dir``'s, with their symlinks resolved."""
        return real_roots((self.where.project_root, self.where.cwd, *self.additional_directories))

    def _file_denial(self, tool_name: str, subject: str | None, script: ShellScript | None) -> Rule | None:
        """Claude Code's deny rules for files reach further than their tool: a ``Read`` deny rule also
        stops ``Edit`` / ``Write`` / ``NotebookEdit`` on that path and the files Bash's ``cat``,
        ``head``... read (a folder ``grep -r`` or ``rg`` searches counts as every file in it); an
        ``Edit`` deny rule what a Bash command writes. A path is checked as written and with its
        symlinks resolved."""
        reading, editing = self._path_denials()
        if subject is None or not (reading or editing):
            return None
        if tool_name in EDIT_TOOLS | READ_TOOLS:
            reads, writes, trees = [Path(subject), self._resolve(subject)], [], []
        elif script is not None:
            files = self._files(script)
            reads, writes, trees = files.reads, files.writes, files.trees
        else:
            return None
        found = [(rule, str(path)) for path in reads for rule in reading]
        found += [(rule, str(path)) for path in writes for rule in editing]
        hit = next((rule for rule, path in found if rule.matches(rule.tool, path, self.where, allowing=False)), None)
        return hit or next((rule for tree in trees if (rule := self._denied_below(tree, reading))), None)

    def _unknown_files(self, script: ShellScript) -> str | None:
        """Why a file a Bash command reads or writes cannot be checked against the Read / Edit deny rules."""
        reading, editing = self._path_denials()
        if script.broken and (reading or editing):
            return script.broken
        files = self._files(script)
        return (files.unknown_reads if reading else None) or (files.unknown_writes if editing else None)

    def _path_denials(self) -> tuple[list[Rule], list[Rule]]:
        """The deny rules with a path (a bare ``Read`` is about the tool, not files)."""
        return ([r for r in self.rules["deny"] if r.tool == "Read" and r.content],
                [r for r in self.rules["deny"] if r.tool == "Edit" and r.content])

    def _files(self, script: ShellScript) -> Files:
        return command_files(script, Path(self.where.cwd), self.where.home)

    def _denied_below(self, tree: Path, rules: list[Rule]) -> Rule | None:
        """The Read deny rule a file below ``tree`` meets (too large a tree counts as one: it cannot be checked)."""
        if not rules:
            return None
        seen = 0
        for dirpath, dirnames, filenames in os.walk(tree):
            seen += len(dirnames) + len(filenames)
            if seen > MAX_TREE_ENTRIES:
                return rules[0]
            for name in [*dirnames, *filenames]:
                path = os.path.join(dirpath, name)
                if rule := next((r for r in rules if r.matches("Read", path, self.where, allowing=False)), None):
                    return rule
        return None

    def has_read_denials(self) -> bool:
        return any(r.tool == "Read" and r.content for r in self.rules["deny"])

    def read_denied(self, path: str) -> bool:
        """Whether a ``Read`` deny rule covers ``path`` (as written or with its symlinks resolved):
        Grep and Glob leave such files out of their results."""
        rules = [r for r in self.rules["deny"] if r.tool == "Read" and r.content]
        candidates = (path, str(self._resolve(path)))
        return any(rule.matches("Read", p, self.where, allowing=False) for rule in rules for p in candidates)

    def _protected_write(self, tool_name: str, subject: str | None, script: ShellScript | None) -> str | None:
        """A protected path (``.git``, ``.claude``, shell rc files...) the call writes, unless an
        ``Edit`` allow rule names that very path (a targeted approval); for Bash also a write whose
        file is decided at run time (it could be one)."""
        if subject is None:
            return None
        if tool_name in EDIT_TOOLS:
            targets = [self._resolve(subject)]
        elif script is not None:
            files = self._files(script)
            if script.broken:
                return f"what it writes is not known ({script.broken}) and could be"
            if files.unknown_writes:
                return f"a file decided at run time ({files.unknown_writes}), which could be"
            targets = files.writes
        else:
            return None
        roots = self.working_directories()
        for target in targets:
            part = protected_part(target, roots)
            if part is not None and not self._targeted(target, part):
                return f"{str(target)!r},"
        return None

    def _targeted(self, path: Path, part: str) -> bool:
        rule = self._first("allow", "Edit", str(path))
        return rule is not None and rule.content is not None and part in rule.content

    def _outside_read(self, tool_name: str, subject: str | None) -> Decision | None:
        """Reads outside the working directories ask (or are refused with
        ``blockReadsOutsideWorkingDirectories``) unless a ``Read`` allow rule covers them."""
        if subject is None:
            return None
        path = self._resolve(subject)
        if inside(path, self.working_directories() + real_roots(self.readable)):
            return None
        call = {"tool_name": tool_name, "subject": subject, "input": {}}
        if self.block_outside_reads:
            message = (f"{describe_call(tool_name, subject)} was refused: it reads outside the working directories, "
                       "and blockReadsOutsideWorkingDirectories is set.")
            return Deny(**call, message=message, source="settings", reason="blockReadsOutsideWorkingDirectories")
        if allowed := self._first("allow", tool_name, str(path)):
            return Allow(**call, rule=allowed.text, source=allowed.source, reason=f"allow rule {allowed.text!r}")
        return self._ask(call, f"{str(path)!r} is outside the working directories")

    def _memory_file(self, tool_name: str, subject: str | None) -> Path | None:
        """The agent's memory folder a file tool's path lies in, once symlinks are resolved (a link
        inside it that points elsewhere is not in it); None for other tools and paths."""
        if subject is None or not self.memory_dirs or tool_name not in EDIT_TOOLS | READ_TOOLS:
            return None
        path = self._resolve(subject)
        return next((root for root in real_roots(self.memory_dirs) if inside(path, [root])), None)

    def _inside_project(self, subject: str | None) -> bool:
        """Inside a working directory once symlinks are resolved (``link/x`` whose link leaves is outside)."""
        return subject is not None and inside(self._resolve(subject), self.working_directories())

    def _resolve(self, subject: str) -> Path:
        return resolve(subject, Path(self.where.cwd), self.where.home)

