"""Read-only commands by allow lists of options: what a careful user found passing is now asked about."""

from __future__ import annotations

from pathlib import Path

import pytest

from covey.permissions.readonly import is_filesystem_edit, is_read_only

CWD = Path("/proj")
ROOTS = [Path("/proj")]


def read_only(command: str) -> bool:
    return is_read_only(command, cwd=CWD, roots=ROOTS, home=Path("/home/u"))


@pytest.mark.parametrize("command", [
    # The tokenizer is not the shell.
    "echo a#b; rm -rf x", "cat a#; cat .env; rm x", "echo a#b > .env", "echo $'\\x72m' -rf x", "echo ${x@P}",
    "echo a#b && rm -rf x", "ls # ; rm x\nrm y",
    # Deny lists that were allow lists.
    "git reflog show --output=.git/config --format=TEXT", "git stash list --output=x", "git stash show --output=x",
    "git stash show --ext-diff", "git log --ext", "git log --ext-d", "git diff --out=x", "git grep --op=CMD x",
    "git grep --open-files-in-pager=CMD x", "git grep -O x", "git diff --no-index a b", "git log --textconv",
    "git cat-file --textconv HEAD:a", "git config core.fsmonitor x", "git config --add a b", "git config -e",
    "git reflog expire --all", "git reflog delete HEAD@{0}", "git branch -D main", "git branch -m x",
    "git tag v1", "git tag -d v1", "git remote add x y", "git remote show origin", "git stash", "git stash pop",
    "git -c core.pager=sh log", "git --git-dir=/x status", "git --work-tree=/x status", "git -C /tmp status",
    "git log --output=x", "git show --output=x", "git log -O/etc/passwd", "git status --porcelain > x",
    "sort --o=FILE a", "sort --ou=FILE a", "sort --compress-prog=sh a", "sort --compress-program=sh a",
    "sort -T /tmp a", "sort --temporary-directory=/tmp a", "sort --files0-from=x",
    "date --s=2020-01-01", "date --se 2020-01-01", "date 0101000020", "hostname --file=x", "hostname --fi x",
    "hostname -F x", "hostname -b x", "tree -R -H .", "tree -o out", "tree -H base", "rg --hostname-bin=sh x",
    "rg --pre=sh x", "rg --pre-glob=* x", "rg -z x", "rg --search-zip x", "uniq in out", "uniq -c in out",
    "wc --files0-from=x", "file -m magic a", "file --magic-file=m a", "file -C", "file --compile",
    "find . -exec rm {} +", "find . -execdir rm {} +", "find . -ok rm {} ;", "find . -delete", "find . -fprint x",
    "find . -fls x", "find . -fprintf x %p", "find . -newerXY x", "find . -name *.py",
    # Unknown options and commands.
    "cat --unknown a", "ls --color-never-heard", "head --follow a", "tree --fromfile x", "jq --rawfile a b .",
    "xargs cat", "env cat a", "sudo cat a", "awk '{print}' a", "sed -n 1p a", "less a", "python -c 1",
    "/bin/cat a", "./cat a", "tee a", "cp a b", "mv a b", "touch a", "mkdir a", "rm a",
    # Reads outside the working directories.
    "cat /etc/shadow", "cat ~/.ssh/id_rsa", "ls /", "grep -r x /", "head ../other/a", "cat < /etc/passwd",
    "cd .. && cat x", "grep -f /etc/shadow x", "find / -name x", "wc -l /proj/../etc/passwd",
    # Writes and variables.
    "cat a > b", "ls >> log", "FOO=1 ls", "ls 2> err", "cat a 1>&2 > x", "echo x >| y",
])
def test_not_read_only(command):
    assert not read_only(command), command


@pytest.mark.parametrize("command", [
    "cat README.md", "ls -la src", "git log --oneline -n 5", "git log --onel", "git status --short --branch",
    "git diff --stat HEAD~1", "git diff --cached", "git show HEAD", "git grep -n TODO", "git branch -a",
    "git branch --list 'feat*'", "git tag -l", "git config --get user.name", "git config --list",
    "git reflog", "git reflog show -n 5", "git stash list", "git stash show -p", "git rev-parse --show-toplevel",
    "git ls-files -m", "git blame -L 1,5 a.py", "sort -rn a", "sort --num a", "sort -k 2 -t , a", "uniq -c a",
    "head -5 a", "head -n 5 a", "tail -n +3 a", "tail -f a", "wc -l a b", "grep -rn --include=*.py x .",
    "grep -e x -e y a", "rg -n -t py x", "date +%s", "date -u", "date --iso-8601=seconds", "hostname -s",
    "tree -L 2 -a", "find . -name '*.py' -type f", "find src -maxdepth 1 -newer a", "file -b a",
    "echo hello", "echo $HOME", "printf '%s\\n' a", "pwd", "du -sh .", "stat -c %s a", "diff -u a b",
    "cut -d , -f 1 a", "nl -ba a", "cat a | sort | uniq -c", "cd src && ls", "ls 2>/dev/null", "cat a 2>&1",
])
def test_still_read_only(command):
    assert read_only(command), command


@pytest.mark.parametrize("command, accepted", [
    ("mkdir -p build", True), ("touch a b", True), ("mv a b", True), ("cp -r src dst", True),
    ("cp --target-dir=/etc a", False), ("cp --target-directory=/etc a", False), ("mv -t ~/.ssh a", False),
    ("mv -t/etc a", False), ("mv --target=/etc a", False), ("cp a /etc/", False), ("touch a#b /etc/cron.d/x", False),
    ("touch .git/hooks/pre-commit", False), ("mkdir .claude/agents", False), ("cp x .bashrc", False),
    ("cp -s /etc/passwd p", False), ("cp -l /etc/passwd p", False), ("cp --reflink=always a b", False),
    ("mv a b --backup=numbered", False), ("touch $X", False), ("mkdir $(echo /etc)", False),
    ("touch ~/x", False),
])
def test_accept_edits_filesystem_commands(command, accepted):
    assert is_filesystem_edit(command, cwd=CWD, roots=ROOTS, home=Path("/home/u")) is accepted, command
