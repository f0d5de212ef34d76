"""Bypasses a red-team review found in the first version of the judge, each now closed."""

from __future__ import annotations

import pytest

from tests.security._policies import bash, policy, project


@pytest.fixture
def place(tmp_path):
    return project(tmp_path)


HIDDEN_LINES = [
    "echo a\\\r\nbash -c 'touch pwned'", "echo a\r# ; touch pwned", "ls \f# ; touch pwned", "ls\v#;touch pwned",
    "echo a\u00a0# ; touch pwned", "cat {/etc/passwd,README.md}", "grep {-f,/etc/passwd} README.md",
    "rg {--pre=rm,x} src", "cat ~-/x", "ls ~+/../..",
]


@pytest.mark.parametrize("command", HIDDEN_LINES)
@pytest.mark.parametrize("mode", ["default", "plan"])
def test_what_bash_reads_differently_from_the_grammar_is_never_auto_allowed(place, command, mode):
    assert bash(policy(*place, mode), command) != "allow", repr(command)


@pytest.mark.parametrize("command", [
    "echo a\\\r\n'rm' -rf x", "echo a\r# ; r\\m -rf x", "{rm,-rf,/tmp/x}", "coproc rm -rf x", "exec -a foo rm -rf x",
    "bash -c -- 'rm -rf x'", "sudo bash -c 'rm x'", "env bash -c 'rm x'", "command eval 'rm x'", "builtin eval 'rm x'",
    "X='rm -rf x'; bash -c \"$X\"", "X='rm -rf x'; eval \"$X\"", "env -u HOME rm x", "sudo -u root rm x",
    "xargs -a list rm", "flock lock rm x", "busybox rm x", "env -S 'rm -rf x'", "find . -exec rm {} +",
    "echo 'rm -rf x' | bash", "bash <<< 'rm -rf x'", "timeout -s 9 5 rm x", "nice -n 5 sudo rm x",
    "flock lock -c 'rm x'", "watch -n 1 rm x",
])
def test_a_deny_rule_cannot_be_walked_around(place, command):
    assert bash(policy(*place, "bypassPermissions", deny=["Bash(rm *)"]), command) in ("deny", "ask"), repr(command)


@pytest.mark.parametrize("command", [
    "diff --unified /etc/passwd README.md", "diff --context /etc/passwd README.md", "column -d /etc/passwd",
    "git diff /etc/passwd README.md", "git show ../../etc/passwd", "grep -R outside .", "rg -L x", "ls -RL",
    "find -L .", "du -L .", "tree -l", "git config --file=/etc/gitconfig --list", "git config -f /x --list",
    "git blame -S /etc/revs a", "git grep -f /etc/passwd", "date -r /etc/shadow", "md5sum -c /etc/list",
    "git reflog --all delete HEAD@{0}",
])
def test_read_only_commands_that_read_outside_or_write_are_asked_about(place, command):
    assert bash(policy(*place), command) != "allow", command


@pytest.mark.parametrize("command", [
    "cd .git && echo x > config", "echo x 1<>.git/config", "echo x >> $HOME/.bashrc", "echo x > .gi?/config",
    "tee {.git/config,/dev/null} < a", "cp a -t.git/hooks", "cp a --target=.git", "cd $D && echo x > config",
    "git config core.fsmonitor evil", "git config --global alias.x '!sh'",
])
def test_protected_paths_cannot_be_reached_sideways_in_bypass_mode(place, command):
    assert bash(policy(*place, "bypassPermissions"), command) == "ask", command


@pytest.mark.parametrize("command", ["cat .en?", "head -n1 .[e]nv", "cd src && cat ../.env", "grep -r SECRET .",
                                     "rg SECRET", "cat {.env,README.md}", "cd $D && cat .env", "tar cf - ."])
def test_a_read_deny_rule_cannot_be_reached_sideways(place, command):
    assert bash(policy(*place, deny=["Read(./.env)"]), command) in ("deny", "ask"), command


@pytest.mark.parametrize("command", ["cd src && echo x > ../.env", "echo x > .en?", "echo x 1<>.env"])
def test_an_edit_deny_rule_cannot_be_reached_sideways(place, command):
    assert bash(policy(*place, "bypassPermissions", deny=["Edit(./.env)"]), command) in ("deny", "ask"), command


def test_accept_edits_does_not_copy_through_links_that_leave(place):
    assert bash(policy(*place, "acceptEdits"), "cp -rL src copy") == "ask"
    assert bash(policy(*place, "acceptEdits"), "cp -r src copy") == "allow"


@pytest.mark.parametrize("command", ["git log HEAD@{0}", "git stash show stash@{1}", "grep -rn x .", "cat ~/notes.txt"])
def test_what_stays_read_only(place, command):
    root, home = place
    (home / "notes.txt").write_text("x")
    expected = "ask" if command.startswith("cat ~") else "allow"  # ~ is outside the project
    assert bash(policy(root, home), command) == expected, command
