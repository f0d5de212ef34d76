"""A handler's ``if`` condition: one permission rule the tool call must match for the hook to run.

Claude Code evaluates ``if`` only on tool events (a handler with ``if`` on any
other event never runs). For Bash it checks each simple command as the permission
gate parses it (covey/shell/parse.py: one parser for every place that reads a
command), with leading ``VAR=value`` assignments, wrappers and quotes set aside, and the
commands inside substitutions and ``bash -c``; when a pattern names more than the command
and the command holds something computed at run time (``$()``, backticks, ``$VAR``), it
runs the hook anyway (the filter is best-effort, and a guard hook should rather run).
"""

from __future__ import annotations

import functools
from pathlib import Path

from covey.errors import UserError
from covey.permissions.bash_judge import first_hit, unknowable
from covey.permissions.rules import PathContext, Rule, parse_rule
from covey.shell.parse import ShellScript, parse



@functools.lru_cache(maxsize=256)
def if_rule(text: str) -> Rule:
    """The parsed rule (a malformed one is a :class:`UserError`; ``read`` checks it on load)."""
    return parse_rule(text, source="hook if")


def valid_if(text: str) -> str | None:
    """Why ``text`` is not a permission rule, or None."""
    try:
        if_rule(text)
    except UserError as exc:
        return str(exc)
    return None


def if_matches(text: str, tool_name: str, subject: str | None, *, cwd: Path, project_dir: Path) -> bool:
    rule = if_rule(text)
    if not rule.applies_to(tool_name):
        return False
    if rule.tool == "Bash" and subject is not None:
        return _bash(rule, subject)
    where = PathContext(cwd=cwd, home=Path.home(), project_root=project_dir)
    return rule.matches(tool_name, subject, where, allowing=False)


def _bash(rule: Rule, command: str) -> bool:
    if rule.content is None:
        return True
    script = parse(command)
    if _names_more_than_the_command(rule.content) and _computed(script):
        return True
    where = PathContext(Path("/"), Path("/"), Path("/"))
    return first_hit([rule], command, script, where) is not None


def _computed(script: ShellScript) -> bool:
    """Something in the command is only known when it runs: a substitution, a variable, a computed program."""
    return unknowable(script) is not None or any(None in c.words for c in script.commands) or not script.understood


def _names_more_than_the_command(content: str) -> bool:
    """``git push *`` names more than the command ``git``; ``rm *`` does not."""
    words = content.replace(":*", " *").split()
    return len([w for w in words if w != "*"]) > 1
