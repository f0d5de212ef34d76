"""A Bash command as the shell will read it: tree-sitter's bash grammar, judged fail-closed.

Why tree-sitter: it is the maintained bash grammar (the one editors and Claude Code itself
use), ships as wheels with no build step, and never raises on odd input: what it cannot
read becomes an ``ERROR`` node, which this module counts as not understood. ``shlex``
is not a shell (it takes ``#`` inside ``a#b`` for a comment), so covey no longer judges
commands with it.

:func:`parse` returns a :class:`Script`: every simple command the grammar finds,
substitutions included, with its words after quote removal, and ``opaque``, the
constructs the judge does not fully understand (substitutions, ``$'…'``, parameter
expansions, here-documents, functions, control flow, unknown syntax). A command with
anything opaque is never read-only and no allow rule covers it; deny rules still see
every simple command inside it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from covey.permissions.shell_commands import Redirect, Script, SimpleCommand
from covey.permissions.shell_words import describe, double_quoted, plain_variable, unescape, unescaped_part
from covey.permissions.wrappers import runs

__all__ = ["MAX_LENGTH", "Redirect", "Script", "SimpleCommand", "parse"]

MAX_LENGTH = 10_000
"""Longer commands are not judged: they are asked about, as in Claude Code."""

_PLAIN = frozenset({"program", "list", "pipeline", "command", "redirected_statement", "negated_command",
                    "comment", "file_redirect", "command_name", "variable_assignment"})
"""Node types the judge reads fully (words are judged by :func:`_word`)."""
_WORDS = frozenset({"word", "string", "raw_string", "concatenation", "number"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_ANON_OK = frozenset({"&&", "||", "|", "|&", ";", "&", "!", "=", "\n"})
_GLOB = re.compile(r"[*?\[]")  # braces: a brace expansion is opaque (see _BRACE)
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
"""A brace expansion (``{a,b}``, ``{1..3}``): bash makes several words of it."""
_QUOTED = re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"")


def parse(command: str) -> Script:
    """The simple commands of ``command`` and what in it is opaque (cached: a gate asks often)."""
    return _parse(command, 0)


@lru_cache(maxsize=2048)
def _parse(command: str, depth: int) -> Script:
    script = Script()
    if len(command) > MAX_LENGTH:
        script.opaque.append(f"longer than {MAX_LENGTH:,} characters")
        script.broken = "it is too long to judge"
        return script
    if "\0" in command:
        script.opaque.append("a NUL character")
        script.broken = "it holds a NUL character"
        return script
    if _ODD_CHARACTER.search(command) or any(c.isspace() and c not in " \t\n" for c in command):
        # Bash reads a CR, FF or VT as part of a word; the grammar as a blank (`a\r# ; rm x`, `\\\r\n`).
        script.opaque.append("a control character the grammar and bash read differently")
        script.broken = "it holds a control character the grammar and bash read differently"
    tree = _parser().parse(command.encode())
    _walk(tree.root_node, script, nested=False)
    if tree.root_node.has_error:
        script.opaque.append("syntax the bash grammar cannot read")
        script.broken = script.broken or "the bash grammar cannot read all of it"
    if depth < 3:
        _inner_scripts(script, depth)
    return script


_ODD_CHARACTER = re.compile(r"[\x01-\x08\x0b-\x1f\x7f]")


def _inner_scripts(script: Script, depth: int) -> None:
    """Deny rules must see ``rm`` in ``bash -c 'rm -rf x'``, ``sudo bash -c …``, ``eval "rm -rf x"``."""
    for command in list(script.commands):
        found = runs(command.words)
        script.computed = script.computed or found.computed
        for code in found.codes:
            inner = _parse(code, depth + 1)
            script.commands.extend(SimpleCommand(**{**c.__dict__, "nested": True}) for c in inner.commands)
            script.broken = script.broken or inner.broken
            script.computed = script.computed or inner.computed
            if inner.opaque:
                script.opaque.append("shell code handed to another shell")


def _walk(node, script: Script, *, nested: bool) -> None:
    kind = node.type
    if not node.is_named:
        if kind not in _ANON_OK:
            script.opaque.append(f"{kind!r}")
        return
    if kind == "ERROR" or node.is_missing:
        script.opaque.append("syntax the bash grammar cannot read")
        return
    if kind == "command":
        _command(node, script, nested=nested, redirects=())
        return
    if kind == "redirected_statement":
        body = node.child_by_field_name("body")
        redirects = tuple(_redirect(r, script) for r in node.children_by_field_name("redirect"))
        if body is not None and body.type == "command":
            _command(body, script, nested=nested, redirects=redirects)
            return
        last = _last_command(body)
        if last is not None:
            # The grammar hangs `a && b > f` on the list; bash binds the redirection to `b`.
            start = len(script.commands)
            _walk(body, script, nested=nested)
            _attach(script, start, last, redirects)
            return
        script.opaque.append("a redirection of a compound statement")
        # Its targets still count as files written (an Edit deny rule, a protected path).
        script.commands.append(SimpleCommand(words=(), source="", redirects=redirects, nested=True))
        for child in node.children:
            if child.type not in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                _walk(child, script, nested=True)
        return
    if kind not in _PLAIN:
        script.opaque.append(describe(kind))
        nested = True
    for child in node.children:
        _walk(child, script, nested=nested)


def _last_command(body):
    """The simple command a trailing redirection belongs to, when ``body`` is a list or pipeline of them."""
    node = body
    while node is not None and node.type in ("list", "pipeline", "negated_command"):
        named = [c for c in node.children if c.is_named]
        node = named[-1] if named else None
    return node if node is not None and node.type == "command" else None


def _attach(script: Script, start: int, last, redirects: tuple[Redirect, ...]) -> None:
    """Give ``redirects`` to the command parsed from ``last`` (the rightmost of the body just walked)."""
    for i in range(len(script.commands) - 1, start - 1, -1):
        command = script.commands[i]
        if not command.nested:
            script.commands[i] = SimpleCommand(**{**command.__dict__, "redirects": (*command.redirects, *redirects)})
            return
    script.opaque.append("a redirection the judge cannot place")


def _command(node, script: Script, *, nested: bool, redirects: tuple[Redirect, ...]) -> None:
    words: list[str | None] = []
    globbed: list[bool] = []
    assignments: list[str] = []
    own_redirects = list(redirects)
    start = end = None
    for child in node.children:
        field_name = node.field_name_for_child(_index(node, child))
        if child.type == "variable_assignment":
            assignments.append(child.text.decode(errors="replace"))
            _assignment(child, script)
        elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            own_redirects.append(_redirect(child, script))
        elif child.type == "command_name" or field_name == "argument":
            target = child.children[0] if child.type == "command_name" and child.child_count else child
            value, glob = _word(target, script)
            words.append(value)
            globbed.append(glob)
            start = child.start_byte if start is None else start
            end = child.end_byte
        elif child.is_named:
            script.opaque.append(describe(child.type))
    source = node.text[(start or node.start_byte) - node.start_byte:(end or node.end_byte) - node.start_byte]
    script.commands.append(SimpleCommand(
        words=tuple(words), source=source.decode(errors="replace"), assignments=tuple(assignments),
        redirects=tuple(own_redirects), globbed=tuple(globbed), nested=nested,
    ))


def _index(parent, child) -> int:
    for i, c in enumerate(parent.children):
        if c.id == child.id:
            return i
    return -1


def _assignment(node, script: Script) -> None:
    value = node.child_by_field_name("value")
    if value is not None:
        _word(value, script)


def _redirect(node, script: Script) -> Redirect:
    if node.type != "file_redirect":
        script.opaque.append("a here-document" if node.type == "heredoc_redirect" else "a here-string")
        for child in node.children:
            if child.type in _SUBSTITUTIONS or child.type in _WORDS:
                _word(child, script)
        return Redirect("<<", None)
    operator = next((c.type for c in node.children if not c.is_named), "")
    descriptor = node.child_by_field_name("descriptor")
    destinations = node.children_by_field_name("destination")
    target: str | None = None
    glob = False
    if len(destinations) == 1:
        target, glob = _word(destinations[0], script)
    elif destinations:
        script.opaque.append("a redirection with several destinations")
    return Redirect(operator, target, descriptor.text.decode() if descriptor is not None else None, glob)


def _word(node, script: Script) -> tuple[str | None, bool]:
    """A word's value after quote removal (None: computed at run time) and whether it globs.
    Substitutions inside are walked so that their commands are judged too."""
    kind = node.type
    text = node.text.decode(errors="replace")
    if kind in ("word", "concatenation") and _BRACE.search(_QUOTED.sub("", unescaped_part(text))):
        script.opaque.append("a brace expansion")
        _walk_dynamic_parts(node, script)
        return None, True
    if kind == "word" and text.startswith(("~+", "~-")):
        script.opaque.append("a directory-stack tilde (~+, ~-)")
        return None, True
    if kind in ("word", "number"):
        if text.startswith("#"):
            script.opaque.append("a word that starts a comment")
            return None, False
        value = unescape(text)
        if value is None:
            script.opaque.append("an escape the judge does not read")
            return None, False
        glob = bool(_GLOB.search(unescaped_part(text)))  # `~` is the run's HOME: known, not a glob
        return value, glob
    if kind == "raw_string":
        return text[1:-1], False
    if kind == "string":
        parts = [c for c in node.children if c.is_named]
        if any(c.type != "string_content" for c in parts):
            for c in parts:
                if c.type != "string_content":
                    _walk_dynamic(c, script)
            return None, False
        return double_quoted(text[1:-1]), False
    if kind == "concatenation":
        values, glob = [], False
        for child in node.children:
            value, child_glob = _word(child, script)
            values.append(value)
            glob = glob or child_glob
        return (None, glob) if any(v is None for v in values) else ("".join(values), glob)  # type: ignore[arg-type]
    _walk_dynamic(node, script)
    return None, False


def _walk_dynamic_parts(node, script: Script) -> None:
    """Substitutions inside a word that is itself unknown still hold commands to judge."""
    for child in node.children:
        if child.type in _SUBSTITUTIONS or child.type in ("expansion", "string"):
            _walk_dynamic(child, script)


def _walk_dynamic(node, script: Script) -> None:
    """A part computed at run time: opaque, and the commands inside it are still collected.
    A plain ``$NAME`` / ``${NAME}`` is only a value the judge does not know, not opaque: the
    command that holds it is judged with that word unknown."""
    if plain_variable(node):
        return
    script.opaque.append(describe(node.type))
    for child in node.children:
        _walk(child, script, nested=True)












@lru_cache(maxsize=1)
def _parser():
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))
