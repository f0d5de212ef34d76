"""A policy's judgement of a Bash command once no deny or ask rule stopped it: allow rules only
for commands the grammar reads fully, part by part, with their output files judged as writes.

A mixin of :class:`covey.permissions.policy.PermissionPolicy`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from covey.permissions.bash_judge import allowing_rule
from covey.permissions.decisions import Allow, Decision
from covey.permissions.paths import inside, resolve
from covey.permissions.readonly import not_read_only
from covey.shell.parse import ShellScript, parse

if TYPE_CHECKING:
    from covey.permissions.host import PolicyHost as _Base
else:
    _Base = object


class BashChecks(_Base):
    def _bash(self, call: dict[str, Any], script: ShellScript, read_only: bool) -> Decision:
        """Allow rules apply only to a command the grammar reads fully: each simple command allowed by
        a rule or read-only, and every file it writes inside the working directories or Edit-allowed."""
        command = call["subject"]
        whole_tool = next((r for r in self.rules["allow"] if r.applies_to("Bash") and r.content is None), None)
        if whole_tool is not None and not (target := self._unapproved_target(script)):
            # `Bash` allowed as a whole tool is the person's word on every command (what it writes
            # outside the working directories and the deny, ask and protected-path checks still count).
            return Allow(**call, rule=whole_tool.text, source=whole_tool.source, reason=f"allow rule {whole_tool.text!r}")
        if not script.understood:
            return self._by_mode(call, False, why="the command holds " + ", ".join(dict.fromkeys(script.opaque)))
        if read_only:
            return self._by_mode(call, True)
        if target := self._unapproved_target(script):
            return self._by_mode(call, False, why=f"an allow rule approves a command, not its output file {target!r}")
        if allowed := self._first("allow", "Bash", command):
            if not any(c in command for c in "&|;\n") and len(script.commands) == 1:
                return Allow(**call, rule=allowed.text, source=allowed.source, reason=f"allow rule {allowed.text!r}")
        if reasons := self._allowed_parts(script):
            return Allow(**call, source=f"mode:{self.mode}", reason="every part is allowed: " + "; ".join(reasons))
        return self._by_mode(call, read_only)

    def _unapproved_target(self, script: ShellScript) -> str | None:
        """An output file no rule lets the command write (Claude Code checks a redirection's target as
        a file write): outside the working directories and no ``Edit`` allow rule, or computed at run time."""
        for simple in script.commands:
            for redirect in simple.redirects:
                if redirect.operator == "<" or (redirect.target or "").isdigit() or redirect.target in ("-", "/dev/null"):
                    continue
                if redirect.target is None or redirect.globbed:
                    return redirect.target or "a computed target"
                path = resolve(redirect.target, Path(self.where.cwd), self.where.home)
                if not inside(path, self.working_directories()) and self._first("allow", "Edit", str(path)) is None:
                    return redirect.target
        return None

    def _allowed_parts(self, script: ShellScript) -> list[str] | None:
        """Claude Code matches a compound command part by part: each must be allowed by a rule or
        read-only. A ``cd`` part moves the others, so such a command is judged whole."""
        if any(c.words[:1] == ("cd",) for c in script.commands):
            return None
        reasons = []
        for simple in script.commands:
            rule = allowing_rule(self.rules["allow"], simple, self.where)
            if rule is None and self._not_read_only(ShellScript([simple])) is not None:
                return None
            reasons.append(f"{simple.source!r} by {rule.text!r}" if rule else f"{simple.source!r} is read-only")
        return reasons

    def _has_bash_rules(self) -> bool:
        return any(r.applies_to("Bash") for r in self.rules["deny"] + self.rules["ask"])

    def _read_only_command(self, tool_name: str, subject: str | None) -> bool:
        """A Bash command Claude Code would run without asking in every mode (``ls``, ``cat``, ``git status``)."""
        if tool_name != "Bash" or subject is None:
            return False
        return self._not_read_only(parse(subject)) is None

    def _not_read_only(self, script: ShellScript) -> str | None:
        return not_read_only(script, cwd=Path(self.where.cwd), roots=self._roots(), home=self.where.home,
                             readable=self.readable)

    def _roots(self) -> tuple[Path, ...]:
        """The working directories: the project and ``--add-dir``'s (the cwd is always one)."""
        return (self.where.project_root, *self.additional_directories)

