"""Git in a folder other than the project's repository runs what that folder's config names
(core.fsmonitor, hooks, pagers, filters): it is not read-only there (issue 39 item 3). No Ray."""

from __future__ import annotations

from pathlib import Path

import pytest

from covey.permissions.git_places import discovered, git_elsewhere
from tests.security._policies import bash, policy, project

EXPECTED = {"default": "ask", "acceptEdits": "ask", "plan": "deny", "dontAsk": "deny"}
READS = ["git status", "git log --oneline -n 3", "git diff", "git show HEAD", "git branch", "git ls-files"]


def _bare(folder: Path) -> Path:
    for name in ("objects", "refs/heads"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "config").write_text("[core]\n\tfsmonitor = touch pwned\n")
    return folder


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    root, home = project(tmp_path_factory.mktemp("gitplaces"))
    _bare(root / "vendor" / "x")
    (root / "vendor" / "x" / "inner").mkdir()
    (root / "nested" / ".git").mkdir(parents=True)
    (root / "linked").mkdir()
    (root / "linked" / ".git").write_text("gitdir: /tmp/elsewhere\n")
    (root / "src" / "deep").mkdir(parents=True, exist_ok=True)
    return root, home


ELSEWHERE = [
    "cd vendor/x && git status", "cd vendor/x/inner && git log", "cd nested && git diff", "cd linked && git status",
    "git -C vendor/x status", "git --git-dir=vendor/x status", "git --work-tree=vendor/x status",
    "GIT_DIR=vendor/x git status", "GIT_CONFIG_GLOBAL=x git status", "git -c core.fsmonitor=x status",
    "git -c core.pager=sh log", "git --exec-path=x status", "cd src && cd ../vendor/x && git status",
    "git --namespace=x log", "git --config-env=core.pager=X log", "env GIT_DIR=vendor/x git log",
]


@pytest.mark.parametrize("command", ELSEWHERE)
@pytest.mark.parametrize("mode", list(EXPECTED))
def test_git_that_would_open_another_repository_is_not_read_only(place, command, mode):
    assert bash(policy(*place, mode), command) == EXPECTED[mode], (mode, command)


@pytest.mark.parametrize("command", READS)
@pytest.mark.parametrize("cwd", ["vendor/x", "vendor/x/inner", "nested", "linked"])
def test_an_agent_whose_cwd_is_another_repository_is_asked(place, command, cwd):
    root, home = place
    assert bash(policy(root, home, cwd=root / cwd), command) == "ask", (cwd, command)
    assert bash(policy(root, home, "plan", cwd=root / cwd), command) == "deny", (cwd, command)


@pytest.mark.parametrize("command", [*READS, "cd src && git status", "cd src/deep && git log -n 1", "cd . && git diff"])
def test_git_in_the_projects_own_repository_stays_read_only(place, command):
    root, home = place
    assert bash(policy(root, home), command) == "allow", command
    assert bash(policy(root, home, cwd=root / "src"), command.replace("cd src && ", "")) == "allow", command


def test_a_bare_layout_at_the_project_root_is_not_the_projects_repository(tmp_path):
    root = _bare(tmp_path / "proj")
    (tmp_path / "home").mkdir()
    assert bash(policy(root, tmp_path / "home"), "git status") == "ask"


def test_a_project_inside_a_repository_above_it_reads_that_one(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    root = tmp_path / "repo" / "proj"
    root.mkdir()
    (tmp_path / "home").mkdir()
    assert bash(policy(root, tmp_path / "home"), "git status") == "allow"
    assert git_elsewhere(root, [root]) is None


def test_discovery_walks_up_as_git_does(place):
    root, _ = place
    assert discovered(root / "vendor" / "x" / "inner") == (root / "vendor" / "x", False)
    assert discovered(root / "nested") == (root / "nested", True)
    assert discovered(root / "src" / "deep") == (root, True)
    assert git_elsewhere(root / "vendor" / "x", [root]) is not None


def test_a_worktree_child_reads_its_own_checkout(place, tmp_path):
    root, home = place
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {root}/.git/worktrees/wt\n")
    child = policy(root, home).for_child(cwd=worktree, project_root=worktree)
    assert child.decide("Bash", False, "git status", {}).behavior == "allow"


def test_covey_creating_a_worktree_runs_no_hook_of_the_repository(tmp_path, monkeypatch):
    import subprocess

    from covey.runtime import worktree as wt

    repo = tmp_path / "repo"
    repo.mkdir()
    run = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {tmp_path}/pwned\n")
    hook.chmod(0o755)
    monkeypatch.setattr(wt, "user_temp_dir", lambda: tmp_path / "tmp")
    created = wt._create(str(repo), "a1")
    assert Path(created.path).is_dir()
    assert not (tmp_path / "pwned").exists()
