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


def last_command(body):
    """The simple command a trailing redirection belongs to, when ``body`` is a list or pipeline of them."""
    node = body
    while node is not None and node.type in ("list", "pipeline", "negated_command"):
        named = [c for c in node.children if c.is_named]
        node = named[-1] if named else None
    return node if node is not None and node.type == "command" else None


def child_index(parent, child) -> int:
    for i, c in enumerate(parent.children):
        if c.id == child.id:
            return i
    return -1


_PLAIN_ARITHMETIC = re.compile(r"\$\(\([0-9\s+\-*/%()<>=!&|^~?:]*\)\)")
"""Digits and operators only: no name (a name's value is evaluated too, ``a[$(cmd)]`` runs cmd)."""


def plain_arithmetic(node) -> bool:
    """``$((1+2))``: a number computed at run time from literals only, nothing evaluated beyond them."""
    return node.type == "arithmetic_expansion" and _PLAIN_ARITHMETIC.fullmatch(node.text.decode(errors="replace")) is not None


def test_form(text: str) -> tuple[str, str] | None:
    """``[ … ]`` and ``[[ … ]]`` as a command name and the text of its arguments (``[`` is the
    command ``test`` with a closing ``]``)."""
    if text.startswith("[[") and text.endswith("]]"):
        return "[[", text[2:-2]
    if text.startswith("[") and text.endswith("]"):
        return "[", text[1:-1]
    return None
