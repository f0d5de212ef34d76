"""Words as bash reads them: escapes and quotes removed, plain variables told apart, and the
names of the constructs the judge does not read (for its messages)."""

from __future__ import annotations

import re

_UNQUOTED_SPECIAL = re.compile(r"[$`()<>;&|\s\"'\\]")
"""After escapes are removed, a bare word holding one of these is something the grammar
read differently from bash (or a construct it folded into a word): not understood."""


def plain_variable(node) -> bool:
    if node.type == "simple_expansion":
        return True
    if node.type != "expansion":
        return False
    named = [c for c in node.children if c.is_named]
    anonymous = [c.type for c in node.children if not c.is_named]
    return len(named) == 1 and named[0].type == "variable_name" and anonymous == ["${", "}"]


def unescape(text: str) -> str | None:
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 >= len(text):
                return None
            if text[i + 1] != "\n":  # backslash-newline joins lines
                out.append(text[i + 1])
            i += 2
            continue
        if _UNQUOTED_SPECIAL.match(char):
            return None
        out.append(char)
        i += 1
    return "".join(out)


def unescaped_part(text: str) -> str:
    return re.sub(r"\\.", "", text)


def double_quoted(body: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), body)


def describe(kind: str) -> str:
    return {
        "command_substitution": "a command substitution", "process_substitution": "a process substitution",
        "expansion": "a parameter expansion", "simple_expansion": "a variable expansion",
        "ansi_c_string": "an ANSI-C quoted string ($'…')", "translated_string": "a translated string ($\"…\")",
        "arithmetic_expansion": "an arithmetic expansion", "function_definition": "a function definition",
        "subshell": "a subshell", "compound_statement": "a compound statement",
        "brace_expression": "a brace expansion",
    }.get(kind, f"a {kind.replace('_', ' ')}")
