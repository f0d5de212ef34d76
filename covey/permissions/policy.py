"""One agent's permission policy: rules plus a mode decide; an asker resolves what must be asked.

The loop calls ``decide`` then ``resolve`` for every tool call; a ``Deny``
becomes an ``is_error`` tool result carrying ``decision.message``.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple

from covey.permissions.askers import Answer, Asker
from covey.permissions.decisions import (
    Allow, Ask, Decision, Deny, PermissionMode, PermissionRequest, describe_call,
    nobody_to_ask, not_pre_approved, refused_by_person,
)
from covey.common.tool_names import canonical_tool_name
from covey.permissions.bash_checks import BashChecks
from covey.permissions.bash_judge import first_hit, unknowable
from covey.permissions.file_checks import FileChecks
from covey.permissions.host import Behavior
from covey.permissions.modes import STICKY_MODES
from covey.permissions.param_rules import matches_parameter
from covey.permissions.readonly import not_filesystem_edit
from covey.permissions.rules import PathContext, Rule, parse_rule, suggest_rule
from covey.permissions.tool_traits import ASKED_IN_PLAN_MODE, EDIT_TOOLS, READ_TOOLS
from covey.shell.parse import parse


class LoggedDecision(NamedTuple):
    tool_name: str
    subject: str | None
    decision: Decision


class PermissionPolicy(FileChecks, BashChecks):
    """Decides each tool call from deny / ask / allow rules and the mode."""

    def __init__(
        self, *, mode: PermissionMode = "default", allow: Iterable[Rule] = (), deny: Iterable[Rule] = (),
        ask: Iterable[Rule] = (), project_root: Path, cwd: Path | None = None, home: Path | None = None,
        asker: Asker | None = None, log_size: int = 1000, additional_directories: Iterable[Path] = (),
        readable: Iterable[Path] = (), block_outside_reads: bool = False, memory_dirs: Iterable[Path] = (),
    ) -> None:
        self.mode = mode
        self.additional_directories = tuple(Path(d) for d in additional_directories)
        """Directories besides the project that count as inside it (``--add-dir``)."""
        self.readable = tuple(Path(d) for d in readable)
        """Folders covey keeps for this session that its agents may read unasked (transcripts, task output)."""
        self.block_outside_reads = block_outside_reads
        """``blockReadsOutsideWorkingDirectories``: a read outside the working directories is refused, not asked."""
        self.memory_dirs = tuple(Path(d) for d in memory_dirs)
        """The agent's own memory folder (a definition's ``memory``): its file tools read and write there unasked."""
        self.rules: dict[Behavior, list[Rule]] = {"allow": list(allow), "deny": list(deny), "ask": list(ask)}
        self.where = PathContext(Path(cwd or project_root), Path(home or Path.home()), Path(project_root))
        self.asker = asker
        self.decisions: deque[LoggedDecision] = deque(maxlen=log_size)
        self.leaving_plan = False
        """An ExitPlanMode call was decided in plan mode (its approval ends plan mode)."""

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
        name = canonical_tool_name(tool_name)
        call: dict[str, Any] = {"tool_name": name, "subject": subject, "input": dict(input or {})}
        decision = self._decide(call, read_only or self._read_only_command(name, subject))
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
        memory_dirs: Iterable[Path] = (),
    ) -> PermissionPolicy:
        """A child's overlay (docs/definitions.md#permissions): the mode cascade, and call-scoped allow rules.

        ``asker`` defaults to none: a child that cannot show a prompt denies; pass
        the parent's asker for ``bubble``. ``project_root``: a worktree child's own checkout,
        which replaces the parent's as its working directory. ``memory_dirs``: the child's own
        memory folder (its parent's is not passed on).
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
            block_outside_reads=self.block_outside_reads, memory_dirs=memory_dirs,
        )

    def child_mode(self, definition_mode: PermissionMode | None) -> PermissionMode:
        """The mode cascade: a parent in a sticky mode keeps it, else the definition's (or the call's)."""
        return self.mode if self.mode in STICKY_MODES else (definition_mode or self.mode)

    def denials(self) -> list[LoggedDecision]:
        return [entry for entry in self.decisions if isinstance(entry.decision, Deny)]

    def _decide(self, call: dict[str, Any], read_only: bool) -> Decision:
        name, subject = call["tool_name"], call["subject"]
        script = parse(subject) if name == "Bash" and subject is not None else None
        if denied := self._first("deny", name, subject, call["input"]) or self._file_denial(name, subject, script):
            return self._deny_by_rule(call, denied)
        if script is not None and (hit := first_hit(self.rules["deny"], subject, script, self.where)):
            return self._deny_by_rule(call, hit)
        if script is not None and self._has_bash_rules() and (unknown := unknowable(script)) is not None:
            return self._ask(call, f"{unknown}, so no deny or ask rule can be checked against it")
        if name == "ExitPlanMode":
            # Whether this call leaves plan mode: the approving answer may switch the mode itself.
            self.leaving_plan = self.mode == "plan"
            if not self.leaving_plan:  # nothing to approve: the tool says so
                return Allow(**call, source=f"mode:{self.mode}", reason="not in plan mode")
        # Plan mode outranks allow rules: a pre-approved edit must not run while planning.
        # ExitPlanMode goes on to be asked (the person's answer is the plan's approval), and so
        # do WebFetch and WebSearch: they change nothing here, as Claude Code lets them run while planning.
        if self.mode == "plan" and not read_only and name not in ASKED_IN_PLAN_MODE:
            message = _PLAN_MESSAGE.format(call=describe_call(name, subject))
            return Deny(**call, message=message, source="mode:plan", reason="plan mode is read-only")
        if asked := self._first("ask", name, subject, call["input"]) or (
                script is not None and first_hit(self.rules["ask"], subject, script, self.where)):
            question = f"Allow {describe_call(name, subject)}?"
            return Ask(**call, message=question, rule=asked.text, source=asked.source, reason=f"ask rule {asked.text!r}")
        if memory := self._memory_file(name, subject):
            return Allow(**call, source="agent-memory", reason=f"in the agent's memory folder {str(memory)!r}")
        if script is not None and (unknown := self._unknown_files(script)):
            return self._ask(call, f"{unknown}, so the Read / Edit deny rules cannot be checked against it")
        if protected := self._protected_write(name, subject, script):
            return self._ask(call, f"it writes {protected} a protected path, which no mode writes without a "
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

    def _from_answer(self, ask: Ask, answer: Answer) -> Decision:
        if answer is True:
            identity = {"tool_name": ask.tool_name, "subject": ask.subject, "input": ask.input}
            return Allow(**identity, source="user", reason="approved when asked")
        if answer is False:
            return refused_by_person(ask)
        if isinstance(answer, Allow):
            for text in answer.add_allow_rules:
                self.add_rule("allow", text, source="session")
            if answer.set_mode:
                self.mode = answer.set_mode
        return answer.model_copy(update={"tool_name": ask.tool_name, "subject": ask.subject, "input": ask.input})

    def _log(self, decision: Decision) -> None:
        self.decisions.append(LoggedDecision(decision.tool_name, decision.subject, decision))


_PLAN_MESSAGE = (
    "{call} was not run: this agent is in plan mode, where only read-only tools run. "
    "Keep researching with read-only tools, then present your plan; changes are made after the plan is approved."
)
