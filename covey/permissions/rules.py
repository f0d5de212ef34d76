"""Claude Code permission rules: ``Tool``, ``Tool(content)``, ``mcp__server[__tool]``.

Content is matched by tool family: ``Bash`` against the command
(``covey.permissions.bash_rules``), ``Read``/``Edit`` against an absolute path with
gitignore-style patterns, anything else (``Agent(Explore)``) as a plain glob.
A backslash escapes ``( ) * \\`` inside content. As in Claude Code, only ``Read(path)``
and ``Edit(path)`` rules take part in file checks: ``Write(path)``, ``Glob(path)``... load
but never match (``covey.permissions.rule_checks`` says so in a warning).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from covey.common.tool_names import canonical_tool_name
from covey.errors import UserError
from covey.permissions.bash_rules import bash_matches
from covey.permissions.paths import case_insensitive
from covey.permissions.rule_checks import rule_problem
from covey.permissions.tool_traits import EDIT_TOOLS, READ_TOOLS, UNCONSULTED_PATH_TOOLS

_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-*]+")
_SINGLE_DIRECTORY = re.compile(r"[^/*?\[\]]+/\*\*")  # `src/**`: a directory name, relative


class RuleError(UserError):
    """A permission rule Claude Code would not load: names the rule, where it was written, and why."""

    def __init__(self, text: str, source: str, reason: str) -> None:
        super().__init__(text, source, reason)
        self.text, self.source, self.reason = text, source, reason

    def __str__(self) -> str:
        return f"permission rule {self.text!r} from {self.source}: {self.reason}"


@dataclass(frozen=True)
class PathContext:
    """The directories path patterns are relative to."""

    cwd: Path
    home: Path
    project_root: Path


class Rule(BaseModel):
    """One parsed rule and where it came from."""

    model_config = ConfigDict(frozen=True)

    text: str
    """The rule as written, e.g. ``Bash(npm run test:*)``."""
    tool: str
    """The canonical tool name (or ``mcp__server`` / ``mcp__server__*``)."""
    content: str | None = None
    """What is inside the parentheses; ``None`` means the whole tool."""
    source: str = "cliArg"
    """Where the rule was written: ``projectSettings:/abs/path``, ``cliArg``, ``session``..."""
    root: Path | None = None
    """Directory a ``/path`` pattern is relative to (the settings file's project)."""

    def applies_to(self, tool_name: str) -> bool:
        """Whether this rule is about ``tool_name`` at all, ignoring content."""
        tool_name = canonical_tool_name(tool_name)
        if self.tool.startswith("mcp__") and "*" not in self.tool and self.content is None:
            server, _, tool = self.tool[len("mcp__"):].partition("__")
            if tool == "":  # `mcp__server`: the whole server
                return tool_name.startswith(f"mcp__{server}__")
        if "*" in self.tool:  # `mcp__server__*`, `mcp__github__get_*`; deny / ask also `*`, `mcp__*`
            return fnmatchcase(tool_name, self.tool)
        # As in Claude Code, `Edit(...)` covers every file-editing tool, `Read(...)` every reader.
        family = {"Edit": EDIT_TOOLS, "Read": READ_TOOLS}.get(self.tool)
        return tool_name in family if family else tool_name == self.tool

    def matches(self, tool_name: str, subject: str | None, where: PathContext, *, allowing: bool) -> bool:
        """Whether the rule covers this call. ``allowing`` makes Bash wildcards refuse compound commands."""
        if not self.applies_to(tool_name):
            return False
        if self.content is None:
            return True
        if subject is None or self.tool in UNCONSULTED_PATH_TOOLS:
            return False
        if self.tool in EDIT_TOOLS | READ_TOOLS:
            base = self._base_for(where)
            # A deny or ask rule covers every spelling the file system takes for its path (`.ENV` is
            # `.env` on macOS); an allow rule keeps its case, so it never allows more than written.
            fold = not allowing and case_insensitive(Path(base.cwd))
            return _path_matches(self._path_pattern(allowing), subject, base, fold=fold)
        if self.tool == "Bash":
            return bash_matches(self.content, subject, allowing=allowing)
        return _compile(self.content, star=".*").fullmatch(subject) is not None

    def _base_for(self, where: PathContext) -> PathContext:
        return PathContext(where.cwd, where.home, self.root or where.project_root)

    def _path_pattern(self, allowing: bool) -> str:
        """Claude Code: a deny or ask rule ``secrets/**`` means a ``secrets`` directory at any depth;
        an allow rule ``src/**`` only ``<cwd>/src``."""
        assert self.content is not None
        if not allowing and _SINGLE_DIRECTORY.fullmatch(self.content) and not self.content.startswith(("~", ".")):
            return "**/" + self.content
        return self.content


def parse_rule(text: str, *, source: str = "cliArg", root: Path | None = None, behavior: str | None = None) -> Rule:
    """Parse ``Tool`` or ``Tool(content)``; a rule Claude Code would not load is a :class:`RuleError`.
    ``behavior`` (``allow`` / ``deny`` / ``ask``) adds the checks that depend on it."""
    rule = text.strip()
    name, paren, rest = rule.partition("(")
    name = name.strip()
    if not _TOOL_NAME.fullmatch(name):
        raise RuleError(text, source, f"tool name {name!r} is empty or invalid")
    if paren and (not rest.endswith(")") or not _balanced(rest[:-1])):
        raise RuleError(text, source, "unbalanced parentheses")
    if not paren and ")" in rule:
        raise RuleError(text, source, "')' without '('")
    content = rest[:-1] if paren else None
    # Claude Code treats `Bash()` and `Bash(*)` as the whole tool.
    if content is not None and content.strip() in ("", "*"):
        content = None
    if problem := rule_problem(name, content, behavior):
        raise RuleError(text, source, problem)
    return Rule(text=rule, tool=canonical_tool_name(name), content=content, source=source, root=root)


def suggest_rule(tool_name: str, subject: str | None) -> str:
    """The narrowest rule that would allow exactly this call (for "always allow")."""
    tool_name = canonical_tool_name(tool_name)
    if subject is None:
        return tool_name
    escaped = re.sub(r"([()*\\])", r"\\\1", subject)
    if tool_name in EDIT_TOOLS | READ_TOOLS and subject.startswith("/"):
        escaped = "/" + escaped  # `//abs` is an absolute path in rule syntax
    # Only `Edit(path)` and `Read(path)` rules are consulted for files: a `Write(path)` would never match.
    family = "Edit" if tool_name in EDIT_TOOLS else "Read" if tool_name in READ_TOOLS else tool_name
    return f"{family}({escaped})"


def _balanced(content: str) -> bool:
    depth = 0
    for char in re.sub(r"\\.", "", content):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _compile(pattern: str, *, star: str, path: bool = False) -> re.Pattern[str]:
    """Translate a glob to a regex: ``*`` -> ``star``; in paths ``**`` spans directories."""
    out, i = [], 0
    while i < len(pattern):
        rest = pattern[i:]
        if rest.startswith("\\") and len(rest) > 1:
            out.append(re.escape(rest[1]))
            i += 2
        elif path and rest.startswith("**/"):
            out.append("(?:.*/)?")
            i += 3
        elif path and rest == "/**":
            out.append("(?:/.*)?")  # also matches the directory itself (a Grep/Glob root)
            i += 3
        elif path and rest.startswith("**"):
            out.append(".*")
            i += 2
        else:
            out.append({"*": star, "?": "[^/]" if path else r"\?"}.get(rest[0], re.escape(rest[0])))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _path_matches(pattern: str, subject: str, where: PathContext, *, fold: bool = False) -> bool:
    """gitignore-style: a pattern covers the path or any directory above it; ``fold``: without case."""
    base, rel_pattern = _anchor(pattern.rstrip("/"), where)
    path = os.path.normpath(subject)
    if fold:
        base, path, rel_pattern = base.lower(), path.lower(), rel_pattern.lower()
    rel = os.path.relpath(path, base)
    if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        return False
    regex = _compile(rel_pattern, star="[^/]*", path=True)
    parts = rel.split("/")
    return any(regex.fullmatch("/".join(parts[:n])) for n in range(1, len(parts) + 1))


def _anchor(pattern: str, where: PathContext) -> tuple[str, str]:
    """Split a pattern into (absolute base directory, pattern relative to it)."""
    if pattern.startswith("//"):
        return "/", pattern[2:]
    if pattern.startswith("~/"):
        return str(where.home), pattern[2:]
    if pattern.startswith("/"):
        return str(where.project_root), pattern[1:]
    if pattern.startswith("./"):
        return str(where.cwd), pattern[2:]
    # gitignore: a pattern without a slash matches at any depth.
    return str(where.cwd), pattern if "/" in pattern else "**/" + pattern
