"""One agent's permission policy: rules plus a mode decide; an asker resolves what must be asked.

The loop calls ``decide`` then ``resolve`` for every tool call; a ``Deny``
becomes an ``is_error`` tool result carrying ``decision.message``.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Literal, Mapping, NamedTuple

from covey.permissions.askers import Answer, Asker
from covey.permissions.decisions import (
    Allow, Ask, Decision, Deny, PermissionMode, PermissionRequest, describe_call,
    nobody_to_ask, not_pre_approved, refused_by_person,
)
from covey.permissions.bash_files import bash_files
from covey.permissions.bash_judge import allowing_rule, first_hit, unnamed
from covey.permissions.modes import STICKY_MODES
from covey.permissions.param_rules import matches_parameter
from covey.permissions.paths import inside, protected_part, real_roots, resolve
from covey.permissions.readonly import not_filesystem_edit, not_read_only
from covey.permissions.rules import EDIT_TOOLS, READ_TOOLS, PathContext, Rule, parse_rule, suggest_rule
from covey.permissions.shell import Script, parse
from covey.tool_names import canonical_tool_name

if TYPE_CHECKING:
    from covey.settings import Settings

Behavior = Literal["allow", "deny", "ask"]


class LoggedDecision(NamedTuple):
    tool_name: str
    subject: str | None
    decision: Decision


class PermissionPolicy:
    """Decides each tool call from deny / ask / allow rules and the mode."""

    def __init__(
        self, *, mode: PermissionMode = "default", allow: Iterable[Rule] = (), deny: Iterable[Rule] = (),
        ask: Iterable[Rule] = (), project_root: Path, cwd: Path | None = None, home: Path | None = None,
        asker: Asker | None = None, log_size: int = 1000, additional_directories: Iterable[Path] = (),
        readable: Iterable[Path] = (), block_outside_reads: bool = False,
    ) -> None:
        self.mode = mode
        self.additional_directories = tuple(Path(d) for d in additional_directories)
        """Directories besides the project that count as inside it (``--add-dir``)."""
        self.readable = tuple(Path(d) for d in readable)
        """Folders covey keeps for this session that its agents may read unasked (transcripts, task output)."""
        self.block_outside_reads = block_outside_reads
        """``blockReadsOutsideWorkingDirectories``: a read outside the working directories is refused, not asked."""
        self.rules: dict[Behavior, list[Rule]] = {"allow": list(allow), "deny": list(deny), "ask": list(ask)}
        self.where = PathContext(Path(cwd or project_root), Path(home or Path.home()), Path(project_root))
        self.asker = asker
        self.decisions: deque[LoggedDecision] = deque(maxlen=log_size)
        self.leaving_plan = False
        """An ExitPlanMode call was decided in plan mode (its approval ends plan mode)."""

    @classmethod
    def from_settings(
        cls, settings: Settings, *, mode: PermissionMode | None = None, cli_allow: Iterable[str] = (),
        cli_deny: Iterable[str] = (), cli_ask: Iterable[str] = (), **kwargs: Any,
    ) -> PermissionPolicy:
        """Settings rules plus ``--allowed-tools`` / ``--disallowed-tools`` (source ``cliArg``)."""
        perms = settings.permissions
        kwargs.setdefault("block_outside_reads", bool(getattr(perms, "block_reads_outside_working_directories", False)))
        return cls(
            mode=mode or perms.default_mode or "default",
            allow=[*perms.allow, *_cli_rules(cli_allow, "allow")], deny=[*perms.deny, *_cli_rules(cli_deny, "deny")],
            ask=[*perms.ask, *_cli_rules(cli_ask, "ask")], **kwargs,
        )

    def add_rule(self, behavior: Behavior, text: str, *, source: str = "session") -> Rule:
        rule = parse_rule(text, source=source, behavior=behavior)
        self.rules[behavior].append(rule)
        return rule

    def drop_rules(self, source_prefix: str) -> None:
        """Remove the rules whose source starts with ``source_prefix`` (a skill's grant when its turn ends)."""
        for behavior, rules in self.rules.items():
            self.rules[behavior] = [rule for rule in rules if not rule.source.startswith(source_prefix)]

    def decide(self, tool_name: str, read_only: bool, subject: str | None, input: Mapping[str, Any] | None = None) -> Decision:
        """The rules' and mode's verdict, before anyone is asked."""
        call = {"tool_name": canonical_tool_name(tool_name), "subject": subject, "input": dict(input or {})}
        decision = self._decide(call, read_only or self._read_only_command(call["tool_name"], subject))
        if self.mode == "dontAsk" and isinstance(decision, Ask):
            decision = not_pre_approved(decision, suggest_rule(tool_name, subject))
        if not isinstance(decision, Ask):
            self._log(decision)
        return decision

    async def resolve(self, decision: Decision, *, agent_id: str | None = None, asker: Asker | None = None,
                      tool_use_id: str | None = None) -> Decision:
        """Turn an ``Ask`` into ``Allow`` / ``Deny`` by asking ``asker`` (default: the policy's)."""
        if not isinstance(decision, Ask):
            return decision
        asker = asker or self.asker
        suggested = suggest_rule(decision.tool_name, decision.subject)
        if asker is None:
            final: Decision = nobody_to_ask(decision, suggested)
        else:
            request = PermissionRequest(
                tool_name=decision.tool_name, subject=decision.subject, input=decision.input,
                message=decision.message, reason=decision.reason, suggested_rule=suggested, agent_id=agent_id,
                tool_use_id=tool_use_id,
            )
            final = self._from_answer(decision, await asker(request))
        self._log(final)
        return final

    def for_child(
        self, *, definition_mode: PermissionMode | None = None, allowed_tools: Iterable[str] | None = None,
        asker: Asker | None = None, cwd: Path | None = None, project_root: Path | None = None,
    ) -> PermissionPolicy:
        """A child's overlay (docs/definitions.md#permissions): the mode cascade, and call-scoped allow rules.

        ``asker`` defaults to none: a child that cannot show a prompt denies; pass
        the parent's asker for ``bubble``. ``project_root``: a worktree child's own checkout,
        which replaces the parent's as its working directory.
        """
        mode = self.child_mode(definition_mode)
        allow = self.rules["allow"]
        if allowed_tools is not None:
            # The parent's earlier approvals must not leak into the child.
            kept = [r for r in allow if r.source != "session"]
            allow = kept + [parse_rule(t, source="session") for t in allowed_tools]
        return PermissionPolicy(
            mode=mode, allow=allow, deny=self.rules["deny"], ask=self.rules["ask"],
            project_root=project_root or self.where.project_root, cwd=cwd or self.where.cwd, home=self.where.home,
            asker=asker, additional_directories=self.additional_directories, readable=self.readable,
            block_outside_reads=self.block_outside_reads,
        )

    def child_mode(self, definition_mode: PermissionMode | None) -> PermissionMode:
        """The mode cascade: a parent in a sticky mode keeps it, else the definition's (or the call's)."""
        return self.mode if self.mode in STICKY_MODES else (definition_mode or self.mode)

    def working_directories(self) -> tuple[Path, ...]:
        """The project, the cwd and ``--add-dir``'s, with their symlinks resolved."""
        return real_roots((self.where.project_root, self.where.cwd, *self.additional_directories))

    def denials(self) -> list[LoggedDecision]:
        return [entry for entry in self.decisions if isinstance(entry.decision, Deny)]

    def _decide(self, call: dict[str, Any], read_only: bool) -> Decision:
        name, subject = call["tool_name"], call["subject"]
        script = parse(subject) if name == "Bash" and subject is not None else None
        if denied := self._first("deny", name, subject, call["input"]) or self._file_denial(name, subject, script):
            return self._deny_by_rule(call, denied)
        if script is not None and (hit := first_hit(self.rules["deny"], subject, script, self.where)):
            return self._deny_by_rule(call, hit)
        if script is not None and self._has_bash_rules() and (dynamic := unnamed(script)) is not None:
            why = f"the program of {dynamic.source!r} is computed at run time, so no deny or ask rule can be checked"
            return self._ask(call, why)
        if name == "ExitPlanMode":
            # Whether this call leaves plan mode: the approving answer may switch the mode itself.
            self.leaving_plan = self.mode == "plan"
            if not self.leaving_plan:  # nothing to approve: the tool says so
                return Allow(**call, source=f"mode:{self.mode}", reason="not in plan mode")
        # Plan mode outranks allow rules: a pre-approved edit must not run while planning.
        # ExitPlanMode goes on to be asked (the person's answer is the plan's approval), and so
        # does WebFetch: it changes nothing here, as Claude Code lets it run while planning.
        if self.mode == "plan" and not read_only and name not in ("ExitPlanMode", "WebFetch"):
            message = _PLAN_MESSAGE.format(call=describe_call(name, subject))
            return Deny(**call, message=message, source="mode:plan", reason="plan mode is read-only")
        if asked := self._first("ask", name, subject, call["input"]) or (
                script is not None and first_hit(self.rules["ask"], subject, script, self.where)):
            question = f"Allow {describe_call(name, subject)}?"
            return Ask(**call, message=question, rule=asked.text, source=asked.source, reason=f"ask rule {asked.text!r}")
        if protected := self._protected_write(name, subject, script):
            return self._ask(call, f"it writes {protected}, a protected path, which no mode writes without a "
                                   "person's approval or an allow rule naming it")
        if self.mode == "bypassPermissions":
            return Allow(**call, source="mode:bypassPermissions", reason="permission checks bypassed")
        if name in READ_TOOLS and (outside := self._outside_read(name, subject)) is not None:
            return outside
        if script is not None:
            return self._bash(call, script, read_only)
        if allowed := self._first("allow", name, subject):
            return Allow(**call, rule=allowed.text, source=allowed.source, reason=f"allow rule {allowed.text!r}")
        return self._by_mode(call, read_only)

    def _bash(self, call: dict[str, Any], script: Script, read_only: bool) -> Decision:
        """Allow rules apply only to a command the grammar reads fully: each simple command allowed by
        a rule or read-only, and every file it writes inside the working directories or Edit-allowed."""
        command = call["subject"]
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

    def _unapproved_target(self, script: Script) -> str | None:
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

    def _allowed_parts(self, script: Script) -> list[str] | None:
        """Claude Code matches a compound command part by part: each must be allowed by a rule or
        read-only. A ``cd`` part moves the others, so such a command is judged whole."""
        if any(c.words[:1] == ("cd",) for c in script.commands):
            return None
        reasons = []
        for simple in script.commands:
            rule = allowing_rule(self.rules["allow"], simple, self.where)
            if rule is None and self._not_read_only(Script([simple])) is not None:
                return None
            reasons.append(f"{simple.source!r} by {rule.text!r}" if rule else f"{simple.source!r} is read-only")
        return reasons

    def _has_bash_rules(self) -> bool:
        return any(r.applies_to("Bash") for r in self.rules["deny"] + self.rules["ask"])

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

    def _read_only_command(self, tool_name: str, subject: str | None) -> bool:
        """A Bash command Claude Code would run without asking in every mode (``ls``, ``cat``, ``git status``)."""
        if tool_name != "Bash" or subject is None:
            return False
        return self._not_read_only(parse(subject)) is None

    def _not_read_only(self, script: Script) -> str | None:
        return not_read_only(script, cwd=Path(self.where.cwd), roots=self._roots(), home=self.where.home,
                             readable=self.readable)

    def _roots(self) -> tuple[Path, ...]:
        """The working directories: the project and ``--add-dir``'s (the cwd is always one)."""
        return (self.where.project_root, *self.additional_directories)

    def _resolve(self, subject: str) -> Path:
        return resolve(subject, Path(self.where.cwd), self.where.home)

    def _by_mode(self, call: dict[str, Any], read_only: bool, why: str = "no rule allows it") -> Decision:
        source = f"mode:{self.mode}"
        if read_only:
            reason = "read-only command" if call["tool_name"] == "Bash" else "read-only tool"
            return Allow(**call, source=source, reason=reason)
        if self.mode == "acceptEdits" and call["tool_name"] in EDIT_TOOLS and self._inside_project(call["subject"]):
            return Allow(**call, source=source, reason="file edit inside the project")
        if self.mode == "acceptEdits" and call["tool_name"] == "Bash" and call["subject"] is not None and \
                not_filesystem_edit(parse(call["subject"]), cwd=Path(self.where.cwd), roots=self._roots(),
                                    home=self.where.home) is None:
            return Allow(**call, source=source, reason="filesystem command inside the project")
        return self._ask(call, why)

    def _ask(self, call: dict[str, Any], why: str) -> Ask:
        return Ask(**call, message=f"Allow {describe_call(call['tool_name'], call['subject'])}?",
                   source=f"mode:{self.mode}", reason=why)

    def _deny_by_rule(self, call: dict[str, Any], rule: Rule) -> Deny:
        shadowed = self._first("allow", call["tool_name"], call["subject"])
        also = f" (the allow rule {shadowed.text!r} from {shadowed.source} also matches; deny wins)" if shadowed else ""
        call_text = describe_call(call["tool_name"], call["subject"])
        message = f"Permission to use {call_text} was denied by the rule {rule.text!r} from {rule.source}{also}."
        return Deny(**call, message=message, rule=rule.text, source=rule.source, reason=f"deny rule {rule.text!r}{also}")

    def _first(self, behavior: Behavior, tool_name: str, subject: str | None,
               input: Mapping[str, Any] | None = None) -> Rule | None:
        """The first rule that covers the call; ``input``: deny and ask rules may also match a parameter.
        A file tool's path is matched as written and with its symlinks resolved (deny and ask rules:
        either; allow rules: the resolved path, so a link cannot carry an approval outside)."""
        allowing = behavior == "allow"
        subjects = [subject]
        if subject is not None and canonical_tool_name(tool_name) in EDIT_TOOLS | READ_TOOLS:
            resolved = str(self._resolve(subject))
            subjects = [resolved] if allowing else [subject, resolved]
        matching = (r for r in self.rules[behavior] for s in subjects if r.matches(tool_name, s, self.where, allowing=allowing)
                    or (input is not None and r.applies_to(tool_name) and matches_parameter(r.tool, r.content, input)))
        return next(matching, None)

    def _inside_project(self, subject: str | None) -> bool:
        """Inside a working directory once symlinks are resolved (``link/x`` whose link leaves is outside)."""
        return subject is not None and inside(self._resolve(subject), self.working_directories())

    def _from_answer(self, ask: Ask, answer: Answer) -> Decision:
        if answer is True:
            identity = {"tool_name": ask.tool_name, "subject": ask.subject, "input": ask.input}
            return Allow(**identity, source="user", reason="approved when asked")
        if answer is False:
            return refused_by_person(ask)
        for text in getattr(answer, "add_allow_rules", []):
            self.add_rule("allow", text, source="session")
        if getattr(answer, "set_mode", None):
            self.mode = answer.set_mode
        return answer.model_copy(update={"tool_name": ask.tool_name, "subject": ask.subject, "input": ask.input})

    def _log(self, decision: Decision) -> None:
        self.decisions.append(LoggedDecision(decision.tool_name, decision.subject, decision))


def _cli_rules(texts: Iterable[str], behavior: Behavior) -> list[Rule]:
    return [parse_rule(text, source="cliArg", behavior=behavior) for text in texts]


_PLAN_MESSAGE = (
    "{call} was not run: this agent is in plan mode, where only read-only tools run. "
    "Keep researching with read-only tools, then present your plan; changes are made after the plan is approved."
)
