"""What Claude Code checks in a permission rule as it loads it.

``rule_problem``: why a rule is invalid (Claude Code skips such a rule with a
warning; covey does the same for a settings file, and refuses it on the command
line). ``rule_warnings``: rules that load but do not do what they seem to, each
with the advice Claude Code gives (a ``Write(path)`` rule is never consulted; a
``*`` before a ``:*`` is literal; a wildcard before a Bash subcommand).
"""

from __future__ import annotations

import re

from covey.permissions.bash_rules import is_legacy_prefix
from covey.permissions.param_rules import primary_field_warning
from covey.permissions.tool_traits import FILE_PATTERN_TOOLS, UNCONSULTED_PATH_TOOLS

_UNESCAPED_STAR = re.compile(r"(?<!\\)\*")
_OPERATOR = re.compile(r"^(?:[|&;<>]|\d+[<>])")


def rule_problem(tool: str, content: str | None, behavior: str | None) -> str | None:
    """Why Claude Code would skip this rule, or None. ``behavior`` None: checks that do not depend on it."""
    if behavior == "allow" and "*" in tool and not _anchored_mcp_glob(tool):
        return (f"wildcard tool name {tool!r} is not supported in allow rules: a glob is allowed only "
                "after a literal mcp__<server>__ prefix")
    if tool.startswith("mcp__"):
        return "MCP rules do not support patterns in parentheses" if content is not None else None
    if "_" not in tool and tool[:1] != tool[:1].upper():
        return f"tool names start with an uppercase letter: use {tool[:1].upper() + tool[1:]!r}"
    if content is None:
        return None
    if tool == "Bash" and ":*" in content and not content.endswith(":*"):
        return "the :* pattern must be at the end (move it there, or use * for a wildcard)"
    if tool == "Bash" and content == ":*":
        return "the prefix before :* cannot be empty"
    if tool in FILE_PATTERN_TOOLS and ":*" in content:
        return 'the ":*" syntax is only for Bash prefix rules: use glob patterns such as * or ** for files'
    return _web_problem(tool, content)


def rule_warnings(tool: str, content: str | None, behavior: str, source: str) -> list[str]:
    """What is worth telling the user about a rule that loads."""
    if content is None:
        return []  # a bare `Write` is matched at the tool level everywhere
    text = f"{tool}({content})"
    instead = UNCONSULTED_PATH_TOOLS.get(tool)
    if instead and not (tool == "Glob" and source == "cliArg"):
        return [f"{text} is not matched by file permission checks: only {instead}(path) rules are. "
                f"Use {instead}({content}) instead ({instead} rules cover every file-"
                f"{'editing' if instead == 'Edit' else 'reading'} tool); this rule is never consulted"]
    if ignored := primary_field_warning(tool, content):
        return [ignored]
    if tool != "Bash" or behavior != "allow":
        return []
    if is_legacy_prefix(content) and _UNESCAPED_STAR.search(content[:-2]):
        return [f"{text}: the * before the trailing :* is a literal character, not a wildcard (the :* prefix "
                f"form takes no wildcards); write Bash({content[:-2]} *) for a wildcard"]
    if program := _wildcard_before_subcommand(content):
        return [f"{text}: the wildcard before the subcommand also matches options inserted before it, so this "
                f"rule is limited only by {program!r}; put the * after the subcommand (e.g. Bash({program} status *))"]
    return []


def _anchored_mcp_glob(tool: str) -> bool:
    parts = tool.split("__")
    return len(parts) >= 3 and parts[0] == "mcp" and bool(parts[1]) and "*" not in parts[1]


def _web_problem(tool: str, content: str) -> str | None:
    if tool == "WebSearch" and ("*" in content or "?" in content):
        return "WebSearch does not support wildcards: use exact search terms"
    if tool == "WebFetch" and ("://" in content or content.startswith("http")):
        return 'WebFetch permissions use a domain, not a URL: use "domain:hostname"'
    if tool == "WebFetch" and not content.startswith("domain:"):
        return 'WebFetch permissions must use the "domain:" prefix'
    return None


def _wildcard_before_subcommand(content: str) -> str | None:
    """The program of a rule like ``git * main``: a literal program, then a wildcard word, then a
    later word that is neither an option nor a wildcard (an operator ends the command)."""
    if is_legacy_prefix(content):
        return None
    words = content.split()
    if len(words) < 3 or _UNESCAPED_STAR.search(words[0]):
        return None
    starred = next((i for i, w in enumerate(words) if _UNESCAPED_STAR.search(w)), None)
    if starred is None:
        return None
    for word in words[starred + 1:]:
        if _OPERATOR.match(word):
            return None
        if not word.startswith("-") and not _UNESCAPED_STAR.search(word):
            return words[0]
    return None
