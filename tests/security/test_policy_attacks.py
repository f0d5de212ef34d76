"""The attacks a careful user found, against a real project on disk: each is asked about or denied."""

from __future__ import annotations

import pytest

from covey.permissions import Allow, Ask, Deny
from tests.security._policies import bash, policy, project


@pytest.fixture
def place(tmp_path):
    return project(tmp_path)


@pytest.mark.parametrize("mode, expected", [("default", "ask"), ("plan", "deny"), ("dontAsk", "deny"), ("acceptEdits", "ask")])
@pytest.mark.parametrize("command", ["echo a#b; rm -rf x", "echo a#b && rm -rf x", "ls # x\nrm -rf x",
                                     "echo $'a' ; rm x", "echo ${x@P}", "cat $(echo .env)"])
def test_a_command_hidden_behind_shell_syntax_is_not_run_unasked(place, mode, expected, command):
    assert bash(policy(*place, mode), command) == expected


@pytest.mark.parametrize("command", [
    "'rm' -rf x", "r\\m -rf x", '"rm" -rf x', "echo $(rm -rf x)", "echo `rm -rf x`", "bash -c 'rm -rf x'",
    "sh -c 'ls; rm -rf x'", "eval rm -rf x", "eval 'rm -rf x'", "sudo rm -rf x", "/bin/rm -rf x",
    "timeout 5 rm -rf x", "env A=1 rm -rf x", "nice -n 5 rm x", "echo ok; rm x", "FOO=1 rm x", "cat <(rm x)",
    "ls && rm x", "xargs rm < list", "nohup rm x &", "f() { rm x; }; f",
])
def test_a_deny_rule_meets_every_simple_command_even_in_bypass_mode(place, command):
    assert bash(policy(*place, "bypassPermissions", deny=["Bash(rm *)"]), command) == "deny"


@pytest.mark.parametrize("command", ["$X -rf x", "${CMD} x", "$(echo rm) -rf x", "\"$R\" x"])
def test_a_program_computed_at_run_time_cannot_pass_a_deny_rule(place, command):
    assert bash(policy(*place, "bypassPermissions", deny=["Bash(rm *)"]), command) in ("ask", "deny")


def test_without_bash_rules_bypass_mode_runs_a_computed_program(place):
    assert bash(policy(*place, "bypassPermissions"), "$X -rf x") == "allow"


@pytest.mark.parametrize("command", ["cat a#; cat .env", "cat alias", "head -1 .env", "grep S .env",
                                     "cat src/../.env", "sudo cat .env", "cat < .env", "echo $(cat .env)"])
def test_a_read_deny_rule_covers_bash_reads_through_comments_links_and_substitutions(place, command):
    assert bash(policy(*place, deny=["Read(./.env)"]), command) == "deny"


@pytest.mark.parametrize("command", ["echo a#b > .env", "echo x >> .env", "cp a .env", "tee .env < a",
                                     "sed -i s/a/b/ .env", "echo x > alias"])
def test_an_edit_deny_rule_covers_bash_writes(place, command):
    assert bash(policy(*place, "bypassPermissions", deny=["Edit(./.env)"]), command) == "deny"


@pytest.mark.parametrize("command, expected", [
    ("echo hi", "allow"), ("echo x > ~/.bashrc", "ask"), ("echo <(cmd)", "ask"), ("echo x; rm y", "ask"),
    ("echo $(rm y)", "ask"), ("echo x > /etc/motd", "ask"), ("echo x > out.txt", "allow"), ("echo x > $F", "ask"),
    ("echo x > .git/config", "ask"),
])
def test_an_allow_rule_approves_the_command_not_what_it_hides_or_writes(place, command, expected):
    assert bash(policy(*place, allow=["Bash(echo *)"]), command) == expected


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "dontAsk"])
@pytest.mark.parametrize("tool, relative", [
    ("Edit", ".git/config"), ("Write", ".git/hooks/pre-commit"), ("Write", ".claude/settings.json"),
    ("Edit", ".vscode/settings.json"), ("Write", ".idea/workspace.xml"), ("NotebookEdit", ".claude/x.ipynb"),
    ("Write", ".mcp.json"), ("Write", ".husky/pre-commit"),
])
def test_protected_paths_are_never_written_unasked(place, mode, tool, relative):
    root, home = place
    decision = policy(root, home, mode).decide(tool, False, str(root / relative), {})
    assert isinstance(decision, (Ask, Deny)), decision
    if mode != "dontAsk":
        assert "protected" in decision.reason


@pytest.mark.parametrize("command", ["echo x > .git/hooks/pre-commit", "cp x .git/config", "touch .claude/settings.json",
                                     "echo x >> ~/.bashrc", "tee ~/.zshrc < a", "mv a .vscode/x",
                                     "if true; then echo x; fi > .git/config", "{ echo x; } > .claude/settings.json",
                                     "ls && echo x > .git/config", "cat a | tee .git/hooks/post-merge"])
def test_protected_paths_are_asked_about_in_bash_too_even_in_bypass_mode(place, command):
    assert bash(policy(*place, "bypassPermissions"), command) == "ask"


def test_shell_rc_files_in_home_are_protected(place):
    root, home = place
    assert isinstance(policy(root, home, "bypassPermissions").decide("Write", False, str(home / ".bashrc"), {}), Ask)


def test_an_allow_rule_that_names_the_protected_path_is_a_targeted_approval(place):
    root, home = place
    p = policy(root, home, allow=["Edit(./.git/config)"])
    assert isinstance(p.decide("Edit", False, str(root / ".git/config"), {}), Allow)
    assert isinstance(policy(root, home, allow=["Edit"]).decide("Edit", False, str(root / ".git/config"), {}), Ask)


def test_accept_edits_does_not_write_through_a_link_that_leaves_the_project(place):
    root, home = place
    p = policy(root, home, "acceptEdits")
    assert isinstance(p.decide("Edit", False, str(root / "link/notes.txt"), {}), Ask)
    assert isinstance(p.decide("Edit", False, str(root / "src/app.py"), {}), Allow)
    assert bash(p, "touch link/new.txt") == "ask"


def test_a_read_deny_rule_catches_a_link_to_the_denied_file(place):
    root, home = place
    p = policy(root, home, deny=["Read(./.env)"])
    for tool in ("Read", "Edit", "NotebookEdit", "Grep"):
        assert isinstance(p.decide(tool, tool in ("Read", "Grep"), str(root / "alias"), {}), Deny), tool


@pytest.mark.parametrize("tool, path", [("Read", "/etc/shadow"), ("Read", "{home}/.ssh/id_rsa"), ("Grep", "/"),
                                        ("Glob", "/etc"), ("Read", "{root}/link/notes.txt"), ("Read", "{root}/../x")])
def test_reads_outside_the_working_directories_ask(place, tool, path):
    root, home = place
    path = path.format(root=root, home=home)
    assert isinstance(policy(root, home).decide(tool, True, path, {}), Ask)
    assert isinstance(policy(root, home, block_outside_reads=True).decide(tool, True, path, {}), Deny)
    assert isinstance(policy(root, home, "bypassPermissions").decide(tool, True, path, {}), Allow)


def test_a_read_allow_rule_or_a_readable_folder_lets_an_outside_read_run(place):
    root, home = place
    assert isinstance(policy(root, home, allow=["Read(//etc/**)"]).decide("Read", True, "/etc/hosts", {}), Allow)
    assert isinstance(policy(root, home, readable=[home / "t"]).decide("Read", True, str(home / "t/a.jsonl"), {}), Allow)
    assert isinstance(policy(root, home).decide("Read", True, str(root / "README.md"), {}), Allow)


def test_tilde_is_the_runs_home_not_the_processes(place, monkeypatch):
    root, home = place
    monkeypatch.setenv("HOME", "/nonexistent-home")
    p = policy(root, home, deny=["Read(~/.ssh/**)"])
    assert bash(p, "cat ~/.ssh/id_rsa") == "deny"
    assert isinstance(p.decide("Read", True, "~/.ssh/id_rsa", {}), Deny)


@pytest.mark.parametrize("command, fires", [("'rm' -rf x", True), ("r\\m -rf x", True), ("bash -c 'rm x'", True),
                                            ("sudo rm x", True), ("echo $(rm x)", True), ("ls", False)])
def test_a_hooks_if_filter_sees_the_command_as_bash_parses_it(command, fires):
    from pathlib import Path

    from covey.hooks.conditions import if_matches

    assert if_matches("Bash(rm *)", "Bash", command, cwd=Path("/p"), project_dir=Path("/p")) is fires


@pytest.mark.parametrize("command, expected", [
    ('echo "${FOO:-unset}"', "allow"), ("echo $(date)", "allow"), ("echo x > /etc/motd", "ask"),
    ("echo x > .git/config", "ask"), ("rm -rf x", "deny"), ("'rm' x", "deny"),
])
def test_bash_allowed_as_a_whole_tool_is_the_persons_word_but_not_past_deny_rules_or_protected_paths(place, command, expected):
    assert bash(policy(*place, allow=["Bash"], deny=["Bash(rm *)"]), command) == expected
