"""How :mod:`covey.shell.parse` walks tree-sitter's bash tree: simple commands, their words after
quote removal, redirections (a here-document's whole first line), and what is opaque."""

from __future__ import annotations

import re
from functools import lru_cache

from covey.shell.commands import Redirect, ShellScript, SimpleCommand
from covey.shell.words import (
    child_index, describe, double_quoted, last_command, plain_arithmetic, plain_variable, test_form, unescape, unescaped_part,
)

_PLAIN = frozenset({"program", "list", "pipeline", "command", "redirected_statement", "negated_command",
                    "comment", "file_redirect", "command_name", "variable_assignment"})
"""Node types the judge reads fully (words are judged by :func:`_word`)."""
_WORDS = frozenset({"word", "string", "raw_string", "concatenation", "number"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_ANON_OK = frozenset({"&&", "||", "|", "|&", ";", "&", "!", "=", "\n"})
_GLOB = re.compile(r"[*?\[]")  # braces: a brace expansion is opaque (see _BRACE)
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
"""A brace expansion (``{a,b}``, ``{1..3}``): bash makes several words of it."""
_QUOTED = re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"")



def read(command: str, script: ShellScript) -> ShellScript:
    """Walk ``command`` into ``script`` (code handed to ``bash -c`` is the caller's to read)."""
    tree = _parser().parse(command.encode())
    _walk(tree.root_node, script, nested=False)
    if tree.root_node.has_error:
        script.opaque.append("syntax the bash grammar cannot read")
        script.broken = script.broken or "the bash grammar cannot read all of it"
    return script


def _walk(node, script: ShellScript, *, nested: bool) -> None:
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
    if kind == "test_command" and _test(node, script, nested=nested):
        return
    if kind == "redirected_statement":
        body = node.child_by_field_name("body")
        redirects, extra, after = _redirects(node.children_by_field_name("redirect"), script)
        last = last_command(body) if body is not None and body.type != "command" else None
        if body is not None and body.type == "command":
            _command(body, script, nested=nested, redirects=redirects, extra=extra)
        elif last is not None:
            # The grammar hangs `a && b > f` on the list; bash binds the redirection to `b`.
            start = len(script.commands)
            _walk(body, script, nested=nested)
            _attach(script, start, redirects, extra)
        else:
            script.opaque.append("a redirection of a compound statement")
            # Its targets still count as files written (an Edit deny rule, a protected path).
            script.commands.append(SimpleCommand(words=(), source="", redirects=redirects, nested=True))
            for child in node.children:
                if child.type not in _REDIRECTS:
                    _walk(child, script, nested=True)
        for tail in after:  # what follows a here-document's delimiter on its line: `cat <<EOF && rm x`
            _walk(tail, script, nested=nested)
        return
    if kind not in _PLAIN:
        script.opaque.append(describe(kind))
        nested = True
    for child in node.children:
        _walk(child, script, nested=nested)


def _test(node, script: ShellScript, *, nested: bool) -> bool:
    """``[ … ]`` is the command ``[``, read as ``test`` is; ``[[ … ]]`` too when it holds one plain test."""
    text = node.text.decode(errors="replace")
    form = test_form(text)
    inner = read("test " + form[1], ShellScript()) if form is not None else None
    if form is None or inner is None or inner.opaque or inner.broken or len(inner.commands) != 1 \
            or inner.commands[0].redirects:
        return False
    found = inner.commands[0]
    script.commands.append(SimpleCommand(**{**found.__dict__, "words": (form[0], *found.words[1:]), "source": text,
                                            "nested": nested}))
    return True


def _attach(script: ShellScript, start: int, redirects: tuple[Redirect, ...], extra: list[tuple[str | None, bool]]) -> None:
    """Give ``redirects`` (and words after a here-document's delimiter) to the rightmost command of the body just walked."""
    for i in range(len(script.commands) - 1, start - 1, -1):
        command = script.commands[i]
        if not command.nested:
            script.commands[i] = SimpleCommand(**{
                **command.__dict__, "redirects": (*command.redirects, *redirects),
                "words": (*command.words, *(w for w, _ in extra)), "globbed": (*command.globbed, *(g for _, g in extra))})
            return
    script.opaque.append("a redirection the judge cannot place")


def _command(node, script: ShellScript, *, nested: bool, redirects: tuple[Redirect, ...],
             extra: list[tuple[str | None, bool]] | None = None) -> None:
    extra = list(extra or ())
    words: list[str | None] = []
    globbed: list[bool] = []
    after: list = []
    assignments: list[str] = []
    own_redirects = list(redirects)
    start = end = None
    for child in node.children:
        field_name = node.field_name_for_child(child_index(node, child))
        if child.type == "variable_assignment":
            assignments.append(child.text.decode(errors="replace"))
            _assignment(child, script)
        elif child.type in _REDIRECTS:
            found, more, tails = _redirects([child], script)
            own_redirects.extend(found)
            extra = [*extra, *more]
            after.extend(tails)
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
        words=(*words, *(w for w, _ in extra)), source=source.decode(errors="replace"), assignments=tuple(assignments),
        redirects=tuple(own_redirects), globbed=(*globbed, *(g for _, g in extra)), nested=nested,
    ))
    for tail in after:
        _walk(tail, script, nested=nested)


def _assignment(node, script: ShellScript) -> None:
    value = node.child_by_field_name("value")
    if value is not None:
        _word(value, script)


def _redirects(nodes, script: ShellScript) -> tuple[tuple[Redirect, ...], list[tuple[str | None, bool]], list]:
    """The redirections, the words bash reads after a here-document's delimiter (``cat <<EOF .env``: an
    operand of ``cat``) and what follows on that line (``&& rm x``, ``| sh``): the whole first line counts."""
    redirects: list[Redirect] = []
    words: list[tuple[str | None, bool]] = []
    after: list = []
    for node in nodes:
        if node.type == "file_redirect":
            redirects.append(_file_redirect(node, script))
            continue
        here_string = node.type == "herestring_redirect"
        script.opaque.append("a here-string" if here_string else "a here-document")
        redirects.append(Redirect("<<<" if here_string else "<<", None))
        quoted = any(c.type == "heredoc_start" and re.search(r"['\"\\]", c.text.decode(errors="replace"))
                     for c in node.children)
        for child in node.children:
            if not child.is_named or child.type in ("heredoc_start", "heredoc_end"):
                continue
            if child.type == "file_redirect":
                redirects.append(_file_redirect(child, script))
            elif child.type == "heredoc_body":
                if not quoted:
                    _body(child.text.decode(errors="replace"), script)
            elif here_string:
                _word(child, script)
            elif child.type in _WORDS or child.type in _SUBSTITUTIONS or child.type in ("expansion", "simple_expansion"):
                words.append(_word(child, script))
            else:
                after.append(child)
    return tuple(redirects), words, after


def _body(text: str, script: ShellScript) -> None:
    """An unquoted here-document's body is expanded as a double-quoted string is (the grammar misses
    backquotes and ``<<-`` bodies): read as one, its substitutions are commands to judge."""
    if not any(mark in text for mark in ("`", "$(", "${", "$[")):
        return
    inner = read(': "' + text.replace('"', '\\"') + '"', ShellScript())
    found = [c for c in inner.commands if c.nested]
    script.commands.extend(found)
    if inner.broken or (not found and ("`" in text or "$(" in text)):
        script.broken = script.broken or "the judge cannot read a here-document's expansions"


def _file_redirect(node, script: ShellScript) -> Redirect:
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


def _word(node, script: ShellScript) -> tuple[str | None, bool]:
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


def _walk_dynamic_parts(node, script: ShellScript) -> None:
    """Substitutions inside a word that is itself unknown still hold commands to judge."""
    for child in node.children:
        if child.type in _SUBSTITUTIONS or child.type in ("expansion", "string"):
            _walk_dynamic(child, script)


def _walk_dynamic(node, script: ShellScript) -> None:
    """A part computed at run time: opaque, and the commands inside it are still collected.
    A plain ``$NAME`` / ``${NAME}`` is only a value the judge does not know, not opaque: the
    command that holds it is judged with that word unknown."""
    if plain_variable(node) or plain_arithmetic(node):
        return
    script.opaque.append(describe(node.type))
    for child in node.children:
        _walk(child, script, nested=True)

@lru_cache(maxsize=1)
def _parser():
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))
