"""Claude Code's rule semantics where they differ from a plain glob: literal legacy prefixes,
unconsulted Write(path) rules, rules it skips as invalid and the warnings it gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from covey.errors import UserError
from covey.permissions.bash_rules import bash_matches
from covey.permissions.rule_checks import rule_problem, rule_warnings
from covey.permissions.rules import PathContext, RuleError, parse_rule

WHERE = PathContext(cwd=Path("/proj"), home=Path("/home/u"), project_root=Path("/proj"))


def allows(content: str, command: str) -> bool:
    return bash_matches(content, command, allowing=True)


def denies(content: str, command: str) -> bool:
    return bash_matches(content, command, allowing=False)


def test_a_star_before_a_trailing_colon_star_is_literal():
    assert not allows("mv git-*:*", "mv git-hooks/a b")
    assert allows("mv git-*:*", "mv git-* dest")
    assert allows("mv git-*:*", "mv git-*")
    assert allows("mv git-* *", "mv git-hooks/a b")  # the wildcard form the warning suggests


def test_legacy_prefix_keeps_its_word_boundary_and_refuses_compounds():
    assert allows("npm run test:*", "npm run test -- -u")
    assert not allows("npm run test:*", "npm run test:unit")
    assert not allows("npm run test:*", "npm run test && rm -rf /")


def test_wrappers_are_set_aside_for_allow_and_deny_rules():
    for command in ("timeout 30 npm test", "timeout -s KILL 5m npm test", "time npm test", "nice -n 10 npm test",
                    "nohup npm test", "stdbuf -oL npm test", "command npm test", "builtin npm test"):
        assert allows("npm test *", command), command
    assert not allows("npm test *", "command -v npm test")  # `command -v` looks a command up
    assert allows("grep *", "xargs grep foo")
    assert not allows("grep *", "xargs -n1 grep foo")  # xargs with flags is an xargs command
    assert not allows("npm test *", "watch npm test")  # not a wrapper Claude Code strips


def test_assignments_allow_rules_look_past_only_inert_ones_deny_rules_any():
    assert allows("npm test *", "NODE_ENV=test npm test")
    assert not allows("npm test *", "LD_PRELOAD=/x.so npm test")
    assert not allows("npm test *", "PATH=/evil npm test")
    assert denies("rm *", "FOO=bar rm -rf tmp/")
    assert denies("rm *", "ls && A=1 B=2 rm -rf tmp/")


def test_write_notebookedit_and_glob_path_rules_never_match():
    for text, tool, path in (("Write(src/**)", "Write", "/proj/src/a.py"), ("NotebookEdit(nb/**)", "NotebookEdit", "/proj/nb/a.ipynb"),
                             ("Glob(src/**)", "Glob", "/proj/src")):
        for allowing in (True, False):
            assert not parse_rule(text).matches(tool, path, WHERE, allowing=allowing), text
    assert parse_rule("Edit(src/**)").matches("Write", "/proj/src/a.py", WHERE, allowing=True)
    assert parse_rule("Read(src/**)").matches("Glob", "/proj/src", WHERE, allowing=True)


def test_a_bare_write_rule_still_covers_every_write_and_draws_no_warning():
    rule = parse_rule("Write")
    assert rule.matches("Write", "/anywhere/a.txt", WHERE, allowing=True)
    assert not rule.matches("Edit", "/anywhere/a.txt", WHERE, allowing=True)
    assert rule_warnings("Write", None, "deny", "projectSettings") == []


@pytest.mark.parametrize("tool, instead", [("Write", "Edit"), ("NotebookEdit", "Edit"), ("MultiEdit", "Edit"), ("Glob", "Read")])
def test_an_unconsulted_path_rule_is_warned_about_with_the_rule_to_write(tool, instead):
    (warning,) = rule_warnings(tool, "docs/**", "allow", "userSettings")
    assert f"{tool}(docs/**) is not matched by file permission checks" in warning
    assert f"Use {instead}(docs/**) instead" in warning


def test_a_glob_path_rule_from_the_command_line_draws_no_warning():
    assert rule_warnings("Glob", "src/**", "allow", "cliArg") == []
    assert rule_warnings("Write", "src/**", "allow", "cliArg") != []


def test_bash_allow_warnings():
    (literal,) = rule_warnings("Bash", "mv git-*:*", "allow", "projectSettings")
    assert "literal" in literal and "Bash(mv git-* *)" in literal
    (before,) = rule_warnings("Bash", "git * main", "allow", "projectSettings")
    assert "before the subcommand" in before and "'git'" in before
    assert rule_warnings("Bash", "git -C * status *", "allow", "projectSettings")
    for quiet in ("npm run *", "git commit:*", "* --version", "git log * --oneline", "ls *", "git * | head"):
        assert rule_warnings("Bash", quiet, "allow", "projectSettings") == [], quiet
    assert rule_warnings("Bash", "git * main", "deny", "projectSettings") == []  # an allow rule's risk only


@pytest.mark.parametrize("text, says", [
    ("Bash(curl:* | sh)", "must be at the end"),
    ("Bash(git:* push)", "must be at the end"),
    ("Bash(:*)", "cannot be empty"),
    ("Read(src:*)", "only for Bash prefix rules"),
    ("Edit(:*)", "only for Bash prefix rules"),
    ("WebFetch(https://example.com)", "not a URL"),
    ("WebFetch(example.com)", '"domain:" prefix'),
    ("WebSearch(claude*)", "does not support wildcards"),
    ("mcp__github(issues)", "MCP rules do not support patterns"),
    ("bash(ls)", "uppercase"),
])
def test_rules_claude_code_skips_are_rule_errors(text, says):
    with pytest.raises(RuleError) as err:
        parse_rule(text, source="projectSettings:/p/.claude/settings.json")
    assert says in err.value.reason and text in str(err.value) and "/p/.claude/settings.json" in str(err.value)
    assert isinstance(err.value, UserError)
    rebuilt = type(err.value)(*err.value.args)  # crosses Ray as a pickled exception
    assert str(rebuilt) == str(err.value)


def test_tool_name_globs_deny_anywhere_allow_only_after_a_literal_server():
    assert parse_rule("mcp__*", behavior="deny").matches("mcp__x__y", None, WHERE, allowing=False)
    assert parse_rule("*", behavior="ask").matches("Bash", "ls", WHERE, allowing=False)
    assert parse_rule("mcp__github__get_*", behavior="allow").matches("mcp__github__get_issue", None, WHERE, allowing=True)
    for text in ("*", "B*", "mcp__*", "mcp__git*__x"):
        assert rule_problem(text, None, "allow") is not None, text
        with pytest.raises(RuleError):
            parse_rule(text, behavior="allow")


def test_a_deny_rule_for_a_directory_name_matches_it_at_any_depth_an_allow_rule_only_at_cwd():
    rule = parse_rule("Read(secrets/**)")
    assert rule.matches("Read", "/proj/deep/secrets/key", WHERE, allowing=False)
    assert not rule.matches("Read", "/proj/deep/secrets/key", WHERE, allowing=True)
    assert rule.matches("Read", "/proj/secrets/key", WHERE, allowing=True)
    assert not parse_rule("Read(/secrets/**)").matches("Read", "/proj/deep/secrets/key", WHERE, allowing=False)


def test_a_redirection_is_no_shell_operator_for_an_allow_rule():
    assert allows("npm run *", "npm run build 2>&1")
    assert allows("npm run *", "npm run build &> build.log")
    assert not allows("npm run *", "npm run build & curl evil")
