"""How a ``Bash(...)`` rule's content matches a command, as Claude Code matches it.

Three shapes: an exact command; the legacy ``prefix:*`` form, whose prefix is
literal (a ``*`` in it is a star, not a wildcard); and ``*`` wildcards, where a
trailing `` *`` also matches the bare command (``Bash(ls *)``: ``ls``, ``ls -la``,
not ``lsof``). A backslash escapes ``( ) * \\``.

Before matching, a command's leading wrappers (``timeout 30``, ``nice``,
``nohup`` ...) and environment assignments are set aside as Claude Code does: an
allow rule looks past assignments of a few inert variables only, a deny or ask
rule past any assignment, so ``FOO=1 rm -rf x`` still meets ``Bash(rm *)``.
"""

from __future__ import annotations

import re

# Allow rules with wildcards must not approve `safe-cmd && rm -rf ~` as `safe-cmd:*`.
# The `&` of a redirection (`2>&1`, `&>`) is no operator.
SHELL_OPERATORS = re.compile(r"&&|\|\||[;|\n`]|\$\(|(?<![<>])&(?!>)")
_SEPARATORS = re.compile(r"&&|\|\||\|&|[;|&\n]")
_UNESCAPED_STAR = re.compile(r"(?<!\\)\*")

_WRAPPERS = [re.compile(p) for p in (
    r"timeout\s+(?:(?:--?[a-z-]+(?:[= ]\S+)?)\s+)*\d+(?:\.\d+)?[smhd]?\s+",
    r"time\s+(?:-p\s+)?", r"nice\s+(?:-n\s*-?\d+\s+|-\d+\s+)?", r"nohup\s+",
    r"stdbuf\s+(?:-[ioe]\s*\S+\s+)+", r"command\s+(?!-[vV]\b)", r"builtin\s+", r"noglob\s+",
    r"xargs\s+(?!-)",  # bare xargs only: `xargs -n1 grep` is an xargs command
)]
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(?:'[^']*'|\"[^\"]*\"|\S*)\s+")
INERT_VARIABLES = frozenset({
    "NODE_ENV", "RUST_LOG", "RUST_BACKTRACE", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
    "NO_COLOR", "FORCE_COLOR", "CI", "TZ", "LANG", "LC_ALL",
})
"""Assignments an allow rule may look past. Claude Code keeps its own list of such
"known-safe" variables; this one holds only variables that change no program's code."""


def is_legacy_prefix(content: str) -> bool:
    return content.endswith(":*") and not content.endswith("\\:*")


def literal(text: str) -> str:
    """Rule text with its backslash escapes resolved."""
    return re.sub(r"\\(.)", r"\1", text)


def bash_matches(content: str, command: str, *, allowing: bool) -> bool:
    """Whether the rule content covers ``command`` (allow rules are stricter: see module doc)."""
    content = content.strip()
    regex, wild = _regex(content)
    if allowing:
        if wild and SHELL_OPERATORS.search(command):
            return False
        return any(regex.fullmatch(form) for form in _forms(command.strip(), allowing=True))
    # Deny and ask rules catch a matching part of a compound command too.
    parts = [command, *_SEPARATORS.split(command)]
    return any(regex.fullmatch(form) for part in parts for form in _forms(part.strip(), allowing=False))


def _regex(content: str) -> tuple[re.Pattern[str], bool]:
    """The content's regex, and whether it matches more than one command."""
    if is_legacy_prefix(content):
        # Claude Code's `prefix:*` takes no wildcards: `mv git-*:*` is the literal `mv git-*`.
        return re.compile(re.escape(literal(content[:-2])) + r"(?:\s.*)?", re.DOTALL), True
    if content.endswith(" *") and not content.endswith("\\ *"):
        return re.compile(_glob(content[:-2]) + r"(?:\s.*)?", re.DOTALL), True
    return re.compile(_glob(content), re.DOTALL), bool(_UNESCAPED_STAR.search(content))


def _glob(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if pattern[i] == "*" else re.escape(pattern[i]))
        i += 1
    return "".join(out)


def _forms(command: str, *, allowing: bool) -> list[str]:
    """The command as written, then with each leading wrapper or assignment set aside."""
    forms = [command]
    while True:
        rest = _strip_one(forms[-1], allowing=allowing)
        if rest is None or rest in forms:
            return forms
        forms.append(rest)


def _strip_one(command: str, *, allowing: bool) -> str | None:
    for wrapper in _WRAPPERS:
        if match := wrapper.match(command):
            return command[match.end():].lstrip()
    if (match := _ASSIGNMENT.match(command)) and (not allowing or match.group(1) in INERT_VARIABLES):
        return command[match.end():].lstrip()
    return None
