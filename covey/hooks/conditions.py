"""A handler's ``if`` condition: one permission rule the tool call must match for the hook to run.

Claude Code evaluates ``if`` only on tool events (a handler with ``if`` on any
other event never runs). For Bash it checks each subcommand, with leading
``VAR=value`` assignments stripped, and the commands inside ``$()`` and
backticks; when a pattern names more than the command and the command holds
``$()``, backticks or ``$VAR``, it runs the hook anyway (the filter is best-effort).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from covey.errors import UserError
from covey.permissions.bash_judge import first_hit
from covey.permissions.shell import parse
from covey.permissions.rules import PathContext, Rule, parse_rule

_ASSIGNMENTS = re.compile(r"(^|&&|\|\||[;|&\n(`])\s*(?:[A-Za-z_]\w*=\S*\s+)+")
_SUBSTITUTIONS = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
_UNKNOWABLE = re.compile(r"\$\(|`|\$[A-Za-z_{]")


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
    if _names_more_than_the_command(rule.content) and _UNKNOWABLE.search(command):
        return True
    inner = [a or b for a, b in _SUBSTITUTIONS.findall(command)]
    text = "\n".join([command, *inner])
    stripped = _ASSIGNMENTS.sub(lambda m: m.group(1) + " ", text)
    where = PathContext(Path("/"), Path("/"), Path("/"))
    # Also as bash parses it, as deny rules see it: `'rm' -rf x`, `bash -c 'rm x'`, `sudo rm x` meet `rm *`.
    return rule.matches("Bash", stripped, where, allowing=False) or first_hit([rule], command, parse(command), where) is not None


def _names_more_than_the_command(content: str) -> bool:
    """``git push *`` names more than the command ``git``; ``rm *`` does not."""
    words = content.replace(":*", " *").split()
    return len([w for w in words if w != "*"]) > 1
