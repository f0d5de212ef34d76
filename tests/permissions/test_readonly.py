"""Claude Code's read-only Bash commands: which run without asking, and what makes a command not read-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from covey.permissions.readonly import MAX_LENGTH, is_filesystem_edit, is_read_only

CWD = Path("/proj/app")
ROOTS = [Path("/proj"), Path("/shared/data")]


def read_only(command: str) -> bool:
    return is_read_only(command, cwd=CWD, roots=ROOTS)


@pytest.mark.parametrize("command", [
    "cat README.md", "ls", "ls -la src", "pwd", "echo hello", "head -n 20 a.txt", "tail -f log.txt",
    "grep -rn TODO src", "rg foo", "wc -l a b", "which python", "diff a b", "stat a", "du -sh .",
    "find . -name '*.py'", "find src -type f -newer x", "sort a.txt", "uniq a.txt", "tree -L 2",
    "file a.bin", "date +%s", "git status", "git log --oneline -10", "git diff HEAD~1", "git show HEAD:a.py",
    "git blame a.py", "git branch", "git branch -a", "git tag", "git tag -l 'v1*'", "git remote -v",
    "git stash list", "git config --get user.name", "git rev-parse HEAD", "git ls-files",
    "ls *.ts", "wc -l src/*.py", "cat 'a b.txt'", "echo $HOME", "grep -r x . 2>/dev/null",
    "ls > /dev/null 2>&1", "cat < input.txt", "git log | head -5", "cd src && ls", "cd ../lib; cat a",
    "cd /shared/data && ls", "ls &", "ls;", "cat a && cat b || echo none", "echo 'a && rm -rf /'",
])
def test_read_only(command):
    assert read_only(command)


@pytest.mark.parametrize("command, why", [
    ("cat x > y", "an output redirection writes a file"),
    ("echo hi >> log", "an appending redirection too"),
    ("ls &> out", "so does &>"),
    ("rm -rf build", "rm is not read-only"),
    ("sed -i s/a/b/ f", "sed is not in the set"),
    ("sed -n 1p f", "sed is not in the set, whatever its flags"),
    ("find . -delete", "find -delete"),
    ("find . -name x -exec rm {} ;", "find -exec"),
    ("find . '-delete'", "quoting does not hide a flag"),
    ("find . -dele\\te", "nor does an escape"),
    ("find . -name *.py", "an unquoted glob could expand to a flag of find"),
    ("find $DIR", "so could a variable"),
    ("sort -o out in", "sort -o writes"),
    ("sort -ro out in", "also in a cluster of short options"),
    ("sort --output=out in", "and as a long option"),
    ("uniq in out", "uniq IN OUT writes OUT"),
    ("rg --pre ./x foo", "rg --pre runs a program"),
    ("date -s 2020-01-01", "date -s sets the clock"),
    ("hostname newname", "hostname NAME sets it"),
    ("file -C -m magic", "file -C compiles a magic file"),
    ("git push", "git push is not read-only"),
    ("git branch new-feature", "git branch NAME creates a branch"),
    ("git -c core.pager=evil log", "a global option before the subcommand"),
    ("git -C /elsewhere status", "a global option before the subcommand"),
    ("git diff --output=patch.txt", "git diff --output writes"),
    ("git grep -O foo", "git grep -O runs a pager program"),
    ("git config user.name x", "git config NAME VALUE writes"),
    ("git stash", "git stash changes the tree"),
    ("git log *.py", "an unquoted glob beside git"),
    ("echo $(rm -rf x)", "command substitution"),
    ("echo `id`", "backticks"),
    ("diff <(ls a) <(ls b)", "process substitution"),
    ("cat <<EOF\nx\nEOF", "a here-document"),
    ("ls\nrm x", "a line break"),
    ("(cd /tmp && ls)", "a subshell"),
    ("ls &&", "a dangling operator"),
    ("&& ls", "a leading operator"),
    ("ls | | cat", "an empty command"),
    ("FOO=1 ls", "an environment assignment"),
    ("LD_PRELOAD=/x.so cat a", "an environment assignment can load code"),
    ("/bin/ls", "a path to a program"),
    ("./ls", "a path to a program"),
    ("$CMD a", "a variable in the command position"),
    ("cd /etc && ls", "cd out of the working directories"),
    ("cd && ls", "a bare cd goes home"),
    ("cd ~ && ls", "so does cd ~"),
    ("cd - && ls", "cd - goes wherever the last one was"),
    ("cd .. && cd .. && ls", "the second cd .. leaves /proj"),
    ("cd src && git -C .. status", "git -C opens another directory's repository"),
    ("cat 'unbalanced", "shlex cannot split it"),
    ("xargs rm", "xargs runs a command"),
    ("env rm x", "env runs a command"),
    ("awk '{system(\"rm x\")}' f", "awk can run commands"),
    ("tee out", "tee writes"),
    ("", "nothing to run"),
])
def test_not_read_only(command, why):
    assert not read_only(command), why


def test_cd_into_the_current_directory_keeps_git_read_only():
    assert read_only("cd . && git status")
    assert read_only("cd /proj/app && git log")


def test_a_command_longer_than_the_limit_is_always_asked_about():
    assert read_only("echo " + "a" * 100)
    assert not read_only("echo " + "a" * MAX_LENGTH)


@pytest.mark.parametrize("command, accepted", [
    ("mkdir -p build/out", True), ("touch notes.txt", True), ("mv a.txt b.txt", True), ("cp -r src ../backup", True),
    ("cp a /shared/data/a", True), ("mkdir build && ls build", True),
    ("cp -r src /tmp/x", False), ("cp a ../../b", False), ("cp --target-directory=/etc a", False), ("cp -t /etc a", False),
    ("mkdir x && rm -rf y", False), ("mkdir *", False), ("mkdir $X", False), ("cd src && mkdir y", False),
    ("mv a b > log", False), ("ls", False), ("rm a", False), ("mkdir", False),
])
def test_accept_edits_also_accepts_filesystem_commands_inside_the_working_directories(command, accepted):
    assert is_filesystem_edit(command, cwd=CWD, roots=ROOTS) is accepted
