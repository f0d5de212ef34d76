"""Worktree isolation against real temporary git repositories."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest
from git import Repo

from covey.errors import UserError
from covey.runtime.worktree import check_isolation, create_worktree, finish_worktree, verify_worktree


@pytest.fixture(autouse=True)
def private_tempdir(tmp_path, monkeypatch):
    """Worktrees go under tempfile.gettempdir(); keep them inside this test's directory."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()


@pytest.fixture
def repo(tmp_path) -> Repo:
    repo = Repo.init(tmp_path / "project")
    nested = tmp_path / "project" / "src" / "pkg"
    nested.mkdir(parents=True)
    (nested / "mod.py").write_text("x = 1\n")
    (tmp_path / "project" / "README.md").write_text("hello\n")
    repo.index.add(["README.md", "src/pkg/mod.py"])
    repo.index.commit("initial")
    yield repo
    repo.close()


def _branches(repo: Repo) -> list[str]:
    return [head.name for head in repo.heads]


def _worktree_paths(repo: Repo) -> list[str]:
    listing = repo.git.worktree("list", "--porcelain").splitlines()
    return [line.split(" ", 1)[1] for line in listing if line.startswith("worktree ")]


async def test_worktree_is_created_outside_the_checkout(repo):
    wt = await create_worktree(repo.working_tree_dir, "agent-a")
    assert wt.branch == "covey/agent-a"
    assert wt.original_head == repo.head.commit.hexsha
    assert wt.repo_root == os.path.realpath(repo.working_tree_dir)
    assert wt.cwd == wt.path and (Path(wt.path) / "README.md").read_text() == "hello\n"
    assert not Path(wt.path).is_relative_to(wt.repo_root)
    assert not repo.is_dirty(untracked_files=True)


async def test_worktrees_live_in_this_users_private_temporary_folder(repo):
    wt = await create_worktree(repo.working_tree_dir, "agent-p")
    folder = Path(tempfile.gettempdir()).resolve() / f"covey-{os.getuid()}" / "worktrees"
    assert Path(wt.path).parent == folder
    assert [stat.S_IMODE(os.stat(p).st_mode) for p in (folder.parent, folder)] == [0o700, 0o700]


async def test_a_shared_worktree_folder_made_by_someone_else_is_refused(repo):
    folder = Path(tempfile.gettempdir()) / f"covey-{os.getuid()}"
    folder.mkdir()
    os.chmod(folder, 0o777)
    with pytest.raises(UserError, match="written by group or others"):
        await create_worktree(repo.working_tree_dir, "agent-q")
    assert "covey/agent-q" not in _branches(repo)


async def test_nested_cwd_maps_to_the_same_subdirectory(repo):
    wt = await create_worktree(os.path.join(repo.working_tree_dir, "src", "pkg"), "agent-n")
    assert wt.cwd == os.path.join(wt.path, "src", "pkg")
    assert (Path(wt.cwd) / "mod.py").exists()


async def test_unchanged_worktree_is_removed_with_its_branch(repo):
    wt = await create_worktree(repo.working_tree_dir, "agent-u")
    outcome = await finish_worktree(wt)
    assert not outcome.kept and outcome.reason is None
    assert not os.path.exists(wt.path)
    assert wt.branch not in _branches(repo)
    assert _worktree_paths(repo) == [os.path.realpath(repo.working_tree_dir)]


async def test_ignored_files_do_not_count_as_changes(repo):
    (Path(repo.working_tree_dir) / ".gitignore").write_text("build/\n")
    repo.index.add([".gitignore"])
    repo.index.commit("ignore build")
    wt = await create_worktree(repo.working_tree_dir, "agent-i")
    (Path(wt.path) / "build").mkdir()
    (Path(wt.path) / "build" / "out.o").write_text("binary")
    assert not (await finish_worktree(wt)).kept


@pytest.mark.parametrize("edit", ["modify", "untracked"])
async def test_edited_worktree_is_kept_and_reported(repo, edit):
    wt = await create_worktree(repo.working_tree_dir, f"agent-{edit}")
    name = "README.md" if edit == "modify" else "new.txt"
    (Path(wt.path) / name).write_text("changed\n")
    outcome = await finish_worktree(wt)
    assert outcome.kept and outcome.reason is None
    assert (outcome.path, outcome.branch) == (wt.path, wt.branch)
    assert os.path.isdir(wt.path) and wt.branch in _branches(repo)


async def test_new_commit_keeps_the_worktree(repo):
    wt = await create_worktree(repo.working_tree_dir, "agent-c")
    with Repo(wt.path) as child:
        (Path(wt.path) / "feature.py").write_text("y = 2\n")
        child.index.add(["feature.py"])
        child.index.commit("feature")
    outcome = await finish_worktree(wt)
    assert outcome.kept and os.path.isdir(wt.path)
    assert repo.commit(wt.branch).hexsha != wt.original_head


async def test_commit_then_switching_back_to_the_original_head_still_keeps_the_branch(repo):
    wt = await create_worktree(repo.working_tree_dir, "agent-s")
    with Repo(wt.path) as child:
        (Path(wt.path) / "feature.py").write_text("y = 2\n")
        child.index.add(["feature.py"])
        child.index.commit("feature")
        child.git.checkout("--detach", wt.original_head)
    assert (await finish_worktree(wt)).kept


async def test_failed_removal_keeps_the_worktree_with_a_reason(repo):
    wt = await create_worktree(repo.working_tree_dir, "agent-l")
    # A locked worktree refuses a single --force, so removal really fails.
    repo.git.worktree("lock", wt.path)
    outcome = await finish_worktree(wt)
    assert outcome.kept and "cleanup failed" in outcome.reason and "locked" in outcome.reason
    assert os.path.isdir(wt.path)


async def test_vanished_worktree_is_reported_not_raised(repo):
    wt = await create_worktree(repo.working_tree_dir, "agent-v")
    shutil.rmtree(wt.path)
    outcome = await finish_worktree(wt)
    assert outcome.kept and outcome.reason


async def test_creating_the_same_worktree_twice_is_a_user_error(repo):
    await create_worktree(repo.working_tree_dir, "agent-d")
    with pytest.raises(UserError, match="Could not create a git worktree"):
        await create_worktree(repo.working_tree_dir, "agent-d")


# -- check_isolation ---------------------------------------------------------


def test_no_isolation_and_no_cwd_is_fine(tmp_path):
    assert check_isolation(cwd=None, isolation=None, base_cwd=str(tmp_path)) is None


def test_a_good_repo_is_fine(repo):
    assert check_isolation(cwd=None, isolation="worktree", base_cwd=repo.working_tree_dir) is None


def test_a_good_cwd_is_fine(tmp_path):
    assert check_isolation(cwd=str(tmp_path), isolation=None, base_cwd="/") is None


def test_cwd_with_worktree_is_refused(tmp_path, repo):
    problem = check_isolation(cwd=str(tmp_path), isolation="worktree", base_cwd=repo.working_tree_dir)
    assert "cannot be used together" in problem


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda tmp: "relative/dir", "must be an absolute path"),
        (lambda tmp: str(tmp / "missing"), "does not exist"),
        (lambda tmp: str(_file(tmp)), "is not a directory"),
    ],
)
def test_bad_cwd_is_refused(tmp_path, make, expected):
    assert expected in check_isolation(cwd=make(tmp_path), isolation=None, base_cwd=str(tmp_path))


def _file(tmp: Path) -> Path:
    path = tmp / "a-file"
    path.write_text("")
    return path


def test_worktree_outside_a_repo_names_the_path(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    problem = check_isolation(cwd=None, isolation="worktree", base_cwd=str(plain))
    assert "not inside a git work tree" in problem and repr(str(plain)) in problem


def test_worktree_from_a_bare_repo_is_refused(tmp_path):
    Repo.init(tmp_path / "bare.git", bare=True).close()
    problem = check_isolation(cwd=None, isolation="worktree", base_cwd=str(tmp_path / "bare.git"))
    assert "bare repository" in problem


async def test_creating_a_worktree_from_a_bare_repo_is_a_user_error_not_a_crash(tmp_path):
    """The check runs first, but the repository may change before the worktree is made."""
    Repo.init(tmp_path / "bare.git", bare=True).close()
    with pytest.raises(UserError, match="is bare"):
        await create_worktree(str(tmp_path / "bare.git"), "agent-bare")


def test_worktree_from_a_repo_without_commits_is_refused(tmp_path):
    Repo.init(tmp_path / "empty").close()
    problem = check_isolation(cwd=None, isolation="worktree", base_cwd=str(tmp_path / "empty"))
    assert "needs a commit" in problem


# -- verify_worktree ---------------------------------------------------------


async def test_verify_accepts_a_live_worktree(repo):
    wt = await create_worktree(repo.working_tree_dir, "agent-ok")
    assert verify_worktree(wt.path, wt.repo_root, wt.branch) is None


async def test_verify_refuses_a_moved_or_removed_worktree(repo, tmp_path):
    wt = await create_worktree(repo.working_tree_dir, "agent-m")
    shutil.move(wt.path, tmp_path / "elsewhere")
    assert "no longer exists" in verify_worktree(wt.path, wt.repo_root, wt.branch)
    # Moved by hand, git no longer knows it: the new place is not adopted either.
    assert "no longer a git worktree" in verify_worktree(str(tmp_path / "elsewhere"), wt.repo_root, wt.branch)
    os.mkdir(wt.path)  # an unrelated directory where the worktree used to be
    assert "no longer a git worktree" in verify_worktree(wt.path, wt.repo_root, wt.branch)


async def test_verify_refuses_another_repo_or_branch(repo, tmp_path):
    wt = await create_worktree(repo.working_tree_dir, "agent-b")
    assert "no longer on branch" in verify_worktree(wt.path, wt.repo_root, "covey/other")
    clone = repo.clone(tmp_path / "clone")
    clone.git.checkout("-b", wt.branch)
    assert "no longer a git worktree" in verify_worktree(clone.working_tree_dir, wt.repo_root, wt.branch)
    clone.close()


async def test_verify_refuses_a_subdirectory_of_the_worktree(repo):
    wt = await create_worktree(repo.working_tree_dir, "agent-sub")
    subdirectory = os.path.join(wt.path, "src")
    assert "no longer a git worktree" in verify_worktree(subdirectory, wt.repo_root, wt.branch)


def test_a_resume_refuses_a_place_it_cannot_verify(tmp_path):
    from types import SimpleNamespace

    from covey.runtime.worktree import resume_place_problem

    assert resume_place_problem(SimpleNamespace(worktree=None, cwd=str(tmp_path))) is None
    gone = SimpleNamespace(worktree=None, cwd=str(tmp_path / "gone"))
    assert "no longer exists" in resume_place_problem(gone)
