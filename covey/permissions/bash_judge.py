"""How rules meet a Bash command: per simple command, after quote removal, failing closed.

Deny and ask rules see every simple command the grammar finds — inside substitutions, inside
``bash -c '…'`` and ``eval``, with wrappers (``sudo``, ``timeout 5``, ``env A=1``) and a path
to the program (``/bin/rm``) set aside — as written and with its quotes removed, so
``'rm' -rf x``, ``r\\m -rf x`` and ``echo $(rm -rf x)`` meet ``Bash(rm *)``. A command whose
name is computed at run time (``$CMD -rf x``) cannot be checked against a deny rule: it is
asked about. Allow rules apply only to commands the grammar reads fully: each simple
command must be allowed by a rule or be read-only, and what it writes is judged as a file
write (:mod:`covey.permissions.bash_files`).
"""

from __future__ import annotations

from typing import Iterable

from covey.permissions.rules import PathContext, Rule
from covey.shell.parse import ShellScript, SimpleCommand
from covey.shell.wrappers import runs


def forms(command: SimpleCommand) -> list[str]:
    """The texts a deny or ask rule is matched against for one simple command."""
    texts = [command.source, " ".join([*command.assignments, command.source]) if command.assignments else ""]
    texts += [" ".join(words) for words in runs(command.words).forms]
    return [t for t in dict.fromkeys(texts) if t]


def first_hit(rules: Iterable[Rule], command: str, script: ShellScript, where: PathContext) -> Rule | None:
    """The first deny or ask rule any simple command of ``command`` (or the whole text) meets."""
    bash_rules = [r for r in rules if r.applies_to("Bash")]
    if not bash_rules:
        return None
    texts = [command, *(text for simple in script.commands for text in forms(simple))]
    return next((rule for rule in bash_rules for text in texts
                 if rule.matches("Bash", text, where, allowing=False)), None)


def unknowable(script: ShellScript) -> str | None:
    """Why some command it runs cannot be checked against a rule: the grammar could not read it all,
    a program or shell code is computed at run time, or a program is named by a variable."""
    if script.broken or script.computed:
        return script.broken or script.computed
    dynamic = next((c for c in script.commands if not c.words or c.words[0] is None), None)
    if dynamic is not None:
        return f"the program of {dynamic.source!r} is computed at run time" if dynamic.words else "a redirected compound statement"
    return None


def allowing_rule(rules: Iterable[Rule], command: SimpleCommand, where: PathContext) -> Rule | None:
    """The allow rule that covers one fully read simple command: as written or with quotes removed."""
    texts = [command.source, " ".join(w for w in command.words if w is not None)]
    if command.assignments:
        texts = [" ".join([*command.assignments, t]) for t in texts]
    return next((rule for rule in rules if rule.applies_to("Bash") for text in texts
                 if rule.matches("Bash", text, where, allowing=True)), None)
