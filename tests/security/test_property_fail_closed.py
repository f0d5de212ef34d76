"""A property test: commands built from shell fragments; whatever the judge cannot prove read-only is
never auto-allowed, and what it can is (so the property is not vacuous)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.security._policies import bash, policy, project

SAFE = [
    "ls", "ls -la src", "cat README.md", "git status", "git log --oneline -n 3", "echo a#b", "echo 'a; rm x'",
    'echo "q\\"x"', "grep -n print src/app.py", "wc -l README.md", "head -5 README.md", "pwd",
    "cat README.md 2>/dev/null", "echo $HOME", "sort -r README.md", "c\\at README.md", "git diff --stat",
    "echo $((1+2))", "test -f README.md", "[ -d src ]", "printf %s x",
]
"""Read-only statements: quotes, comments and escapes included, none of them live."""
DANGEROUS = [
    "rm -rf x", "touch y", "echo x > f", "cat $(rm x)", "echo `rm x`", "sh -c 'rm x'", "bash -c ls", "eval ls",
    "echo $'\\x72m'", "cat <(rm x)", "python -c 1", "git push", "sort -o f README.md", "find . -delete", "X=1 ls",
    "ls > /tmp/x", "$CMD x", "cat /etc/shadow", "git log --output=f", "git grep --op=sh x", "tee f < README.md",
    "f() { rm x; }; f", "{ rm x; }", "(rm x)", "echo ${x@P}", "cat <<EOF\nx\nEOF", "ls >> f", "sort --compress-prog=sh a",
    "uniq README.md out", "date -s 1", "cd / && cat etc/passwd", "'rm' x", "echo a#b;rm x", "cat ../../etc/passwd",
    "cat link/notes.txt", "git -c core.pager=sh log", "xargs rm < README.md", "echo $((a[1]))", "echo $((x))", "printf -v x y", "! rm x", "ls |& rm x",
]
"""Statements that write, run something else, read outside the project, or hide shell syntax."""
SEPARATORS = [";", " ; ", " && ", " || ", " | ", "\n", " & "]

statement = st.one_of(st.sampled_from(SAFE).map(lambda s: (s, False)), st.sampled_from(DANGEROUS).map(lambda s: (s, True)))


@st.composite
def commands(draw):
    parts = draw(st.lists(statement, min_size=1, max_size=4))
    text = parts[0][0]
    for part, _ in parts[1:]:
        text += draw(st.sampled_from(SEPARATORS)) + part
    return text, any(dangerous for _, dangerous in parts)


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    return project(tmp_path_factory.mktemp("property"))


@settings(max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(commands())
def test_nothing_unproven_is_auto_allowed(place, case):
    command, dangerous = case
    for mode in ("default", "plan", "dontAsk", "acceptEdits"):
        behavior = bash(policy(*place, mode), command)
        if dangerous and not (mode == "acceptEdits" and _only_edits(command)):
            assert behavior != "allow", (mode, command)
        elif mode != "acceptEdits" or "&" not in command:
            assert behavior == "allow", (mode, command)


def _only_edits(command: str) -> bool:
    """acceptEdits runs `touch` inside the project unasked, as Claude Code does."""
    return all(f not in command for f in DANGEROUS if f != "touch y")


@settings(max_examples=200, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(commands())
def test_allow_rules_do_not_carry_what_they_do_not_name(place, case):
    command, dangerous = case
    p = policy(*place, allow=["Bash(ls *)", "Bash(cat *)", "Bash(git status *)"])
    approved = ("echo x > f", "ls > /tmp", "ls >> f", "cat /etc/shadow", "cat ../../etc/passwd", "cat link/notes.txt")
    if dangerous and not any(fragment in command for fragment in approved):  # what the rules name, they approve
        assert bash(p, command) != "allow", command


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet="ab ;&|<>()$`'\"\\#{}*~-=\n!", max_size=24))
def test_arbitrary_shell_text_is_allowed_only_when_read_only_and_never_raises(text):
    from pathlib import Path

    from covey.permissions import PermissionPolicy
    from covey.permissions.readonly import not_read_only
    from covey.shell.parse import parse

    p = PermissionPolicy(project_root=Path("/proj"), home=Path("/home/u"))
    decision = p.decide("Bash", False, text, {"command": text})
    if decision.behavior == "allow":
        assert not_read_only(parse(text), cwd=Path("/proj"), roots=[Path("/proj")], home=Path("/home/u")) is None
        assert parse(text).understood
