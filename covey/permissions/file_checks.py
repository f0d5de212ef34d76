"""A policy's checks on files: paths resolved (symlinks, the run's ``~``), the working directories,
Read/Edit deny rules that reach other tools, protected paths, reads outside the working directories.

A mixin of :class:`covey.permissions.policy.PermissionPolicy` (it uses the policy's rules,
``where`` and ``_first``); kept apart so that each file reads as one concern.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from covey.permissions.bash_files import bash_files
from covey.permissions.decisions import Allow, Decision, Deny, describe_call
from covey.permissions.paths import inside, protected_part, real_roots, resolve
from covey.permissions.rules import EDIT_TOOLS, READ_TOOLS, Rule
from covey.permissions.shell import Script

if TYPE_CHECKING:
    from covey.permissions.policy import PermissionPolicy as _Base
else:
    _Base = object


class FileChecks(_Base):
    def working_directories(self) -> tuple[Path, ...]:
        """The project, the cwd and ``--add-dir``'s, with their symlinks resolved."""
        return real_roots((self.where.project_root, self.where.cwd, *self.additional_directories))

    def _file_denial(self, tool_name: str, subject: str | None, script: Script | None) -> Rule | None:
        """Claude Code's deny rules for files reach further than their tool: a ``Read`` deny rule also
        stops ``Edit`` / ``Write`` / ``NotebookEdit`` on that path and the files Bash's ``cat``,
        ``head``... read; an ``Edit`` deny rule the target of an output redirection. A path is
        checked as written and with its symlinks resolved."""
        paths = {"Read": [r for r in self.rules["deny"] if r.tool == "Read" and r.content],
                 "Edit": [r for r in self.rules["deny"] if r.tool == "Edit" and r.content]}  # a bare `Read` is the tool's
        if subject is None or not (paths["Read"] or paths["Edit"]):
            return None
        if tool_name in EDIT_TOOLS | READ_TOOLS:
            reads, writes = [Path(subject), self._resolve(subject)], []
        elif script is not None:
            reads, writes = bash_files(script, Path(self.where.cwd), self.where.home)
        else:
            return None
        found = [(rule, str(path)) for path in reads for rule in paths["Read"]]
        found += [(rule, str(path)) for path in writes for rule in paths["Edit"]]
        return next((rule for rule, path in found if rule.matches(rule.tool, path, self.where, allowing=False)), None)

    def has_read_denials(self) -> bool:
        return any(r.tool == "Read" and r.content for r in self.rules["deny"])

    def read_denied(self, path: str) -> bool:
        """Whether a ``Read`` deny rule covers ``path`` (as written or with its symlinks resolved):
        Grep and Glob leave such files out of their results."""
        rules = [r for r in self.rules["deny"] if r.tool == "Read" and r.content]
        candidates = (path, str(self._resolve(path)))
        return any(rule.matches("Read", p, self.where, allowing=False) for rule in rules for p in candidates)

    def _protected_write(self, tool_name: str, subject: str | None, script: Script | None) -> str | None:
        """A protected path (``.git``, ``.claude``, shell rc files...) the call writes, unless an
        ``Edit`` allow rule names that very path (a targeted approval)."""
        if subject is None:
            return None
        if tool_name in EDIT_TOOLS:
            targets = [self._resolve(subject)]
        elif script is not None:
            targets = bash_files(script, Path(self.where.cwd), self.where.home)[1]
        else:
            return None
        roots = self.working_directories()
        for target in targets:
            part = protected_part(target, roots)
            if part is not None and not self._targeted(target, part):
                return repr(str(target))
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

    def _inside_project(self, subject: str | None) -> bool:
        """Inside a working directory once symlinks are resolved (``link/x`` whose link leaves is outside)."""
        return subject is not None and inside(self._resolve(subject), self.working_directories())

    def _resolve(self, subject: str) -> Path:
        return resolve(subject, Path(self.where.cwd), self.where.home)

