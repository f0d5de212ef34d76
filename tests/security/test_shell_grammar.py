"""The judge reads a command as bash does (tree-sitter's bash grammar), and fails closed on what it cannot."""

from __future__ import annotations

import pytest

from covey.shell.parse import parse


@pytest.mark.parametrize("command, words", [
    ("echo a#b; rm -rf x", [("echo", "a#b"), ("rm", "-rf", "x")]),
    ("cat a# ; cat .env", [("cat", "a#"), ("cat", ".env")]),
    ("'rm' -rf x", [("rm", "-rf", "x")]),
    ("r\\m -rf x", [("rm", "-rf", "x")]),
    ('"r"m -rf x', [("rm", "-rf", "x")]),
    ("ls # a comment; rm x", [("ls",)]),
    ("echo 'a; rm x'", [("echo", "a; rm x")]),
    ('echo "a\\"b"', [("echo", 'a"b')]),
    ("a | b && c || d; e & f", [("a",), ("b",), ("c",), ("d",), ("e",), ("f",)]),
    ("ls\nrm x", [("ls",), ("rm", "x")]),
])
def test_simple_commands_after_quote_removal(command, words):
    script = parse(command)
    assert [c.words for c in script.commands] == words
    assert script.understood


@pytest.mark.parametrize("command, opaque", [
    ("echo $(rm -rf x)", "a command substitution"),
    ("echo `rm -rf x`", "a command substitution"),
    ("echo <(cmd)", "a process substitution"),
    ("cat >(tee x)", "a process substitution"),
    ("echo $'\\x41'", "an ANSI-C quoted string"),
    ("echo ${x@P}", "a parameter expansion"),
    ("echo ${x:-$(rm y)}", "a parameter expansion"),
    ("echo $((x+2))", "an arithmetic expansion"),
    ("cat <<EOF\nhi\nEOF", "a here-document"),
    ("cat <<< hi", "a here-string"),
    ("f() { rm x; }; f", "a function definition"),
    ("( rm x )", "a subshell"),
    ("{ rm x; }", "a compound statement"),
    ("if true; then rm x; fi", "if statement"),
    ("for f in *; do rm $f; done", "for statement"),
    ("while true; do :; done", "while statement"),
    ("case x in x) rm y;; esac", "case statement"),
    ("[[ -f x && -d y ]] && rm x", "test command"),
    ("export A=1", "declaration command"),
    ("ls (", "syntax the bash grammar cannot read"),
    ("echo $\"x\"", "$"),
])
def test_what_the_judge_does_not_fully_read_is_opaque(command, opaque):
    script = parse(command)
    assert not script.understood
    assert any(opaque in why for why in script.opaque), script.opaque


@pytest.mark.parametrize("command, inner", [
    ("echo $(rm -rf x)", ("rm", "-rf", "x")),
    ("echo `rm -rf x`", ("rm", "-rf", "x")),
    ("cat <(rm x)", ("rm", "x")),
    ("bash -c 'rm -rf x'", ("rm", "-rf", "x")),
    ("sh -c \"rm -rf x\"", ("rm", "-rf", "x")),
    ("bash -lc 'rm x'", ("rm", "x")),
    ("eval rm -rf x", ("rm", "-rf", "x")),
    ("eval 'rm -rf x'", ("rm", "-rf", "x")),
    ("f() { rm x; }", ("rm", "x")),
    ("echo ${x:-$(rm y)}", ("rm", "y")),
])
def test_commands_inside_substitutions_and_inner_shells_are_found(command, inner):
    assert inner in [c.words for c in parse(command).commands]


def test_a_plain_variable_is_an_unknown_word_not_an_opaque_construct():
    script = parse("echo $HOME ${USER}")
    assert script.understood and script.commands[0].words == ("echo", None, None)


@pytest.mark.parametrize("command", ['bash -c "$X"', 'eval "$X"', "echo rm x | bash", "sudo $CMD x", "bash -c -- \"$X\"",
                                     "env $P rm", "bash <<< 'rm x'"])
def test_code_or_a_program_computed_at_run_time_is_known_to_be_unknown(command):
    assert parse(command).computed, command


def test_overlong_and_nul_commands_are_opaque():
    assert not parse("ls " + "a" * 10_001).understood
    assert not parse("ls\0rm").understood
