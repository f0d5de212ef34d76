"""Git worktree isolation for child agents (docs/definitions.md#worktree-isolation).

A child launched with ``isolation: "worktree"`` gets a fresh checkout of the
parent's HEAD on its own branch ``covey/<agent_id>``. The checkout lives beside
the repository, under ``<tempdir>/covey-<uid>/worktrees/`` (0700, this user's only:
``covey.common.private_dirs``), so that it never shows up as untracked files in the parent's
checkout. When the child ends, a worktree with no changes is removed with its branch;
anything else is kept and reported.

What a worktree does NOT isolate: it isolates the checkout only. The object
store, refs, hooks, config and ``git stash`` are shared with the main
repository (a stash or a tag made in the child is visible to the parent).
Credentials, API quotas, network services, databases, processes the child
starts, and every path outside the repository (absolute paths, ``~``, ``/tmp``)
are the same real ones the parent uses. Ignored files (build output, caches)
do not count as changes, so they are removed with an unchanged worktree.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from covey.common.private_dirs import private_dir, user_temp_dir
from covey.errors import UserError

if TYPE_CHECKING:
    from git import Repo

BRANCH_PREFIX = "covey/"
# gitpython is imported inside the functions that use it: an agent that never
# isolates (most of them) does not load it (~3 MiB per agent actor).


class Worktree(BaseModel):
    """A worktree made for one agent; plain fields so it fits the registry record."""

    path: str
    """Real path of the worktree's root."""
    branch: str
    original_head: str
    """Commit sha the branch started from; "no changes" is measured against it."""
    repo_root: str
    """Real path of the main repository's work tree."""
    cwd: str
    """Where the child starts: the worktree plus the subdirectory the parent was in."""
    hook: bool = False
    """Made by WorktreeCreate hooks, not git (``covey/runtime/worktree_hooks.py``): no branch or
    head to measure changes by, so it is always kept."""


class WorktreeOutcome(BaseModel):
    """What became of a worktree when its agent ended; a kept one is reported with path and branch."""

    kept: bool
    path: str
    branch: str
    reason: str | None = None
    """Set when cleanup failed; the worktree is then kept, changed or not."""


def _open_repo(cwd: str) -> Repo | None:
    from git import InvalidGitRepositoryError, NoSuchPathError, Repo

    try:
        return Repo(cwd, search_parent_directories=True)
    except (InvalidGitRepositoryError, NoSuchPathError):
        return None


def _cwd_problem(cwd: str) -> str | None:
    if not os.path.isabs(cwd):
        return f"'cwd' must be an absolute path, got {cwd!r}."
    if not os.path.exists(cwd):
        return f"'cwd' {cwd!r} does not exist."
    if not os.path.isdir(cwd):
        return f"'cwd' {cwd!r} is not a directory."
    return None


def _worktree_problem(base_cwd: str) -> str | None:
    repo = _open_repo(base_cwd)
    if repo is None:
        return f'isolation: "worktree" needs a git repository; {base_cwd!r} is not inside a git work tree.'
    with repo:
        if repo.bare:
            return f'isolation: "worktree" cannot branch from the bare repository at {repo.git_dir!r}.'
        if not repo.head.is_valid():
            return (
                f'isolation: "worktree" needs a commit to branch from; '
                f"the repository at {repo.working_tree_dir!r} has none."
            )
    return None


def check_isolation(*, cwd: str | None, isolation: str | None, base_cwd: str, hooked: bool = False) -> str | None:
    """Why this placement cannot be used, or None; runs before anything is created (docs/subagents.md#limits-the-registry-actor, check 5).
    ``hooked``: WorktreeCreate hooks make the worktree, so no git repository is needed."""
    if cwd is not None and isolation == "worktree":
        return "'cwd' and isolation: \"worktree\" cannot be used together; pick one."
    if cwd is not None:
        return _cwd_problem(cwd)
    if isolation == "worktree" and not hooked:
        return _worktree_problem(base_cwd)
    return None


SAFE_GIT = ("core.hooksPath=/dev/null", "core.fsmonitor=false", "safe.bareRepository=explicit", "diff.external=")
"""What covey's own git runs with: the agent's cwd may sit in a folder a model wrote, whose config would
otherwise run hooks or an fsmonitor program (docs/permissions.md, "Git in another repository")."""


def _create(base_cwd: str, agent_id: str) -> Worktree:
    from git import GitCommandError, Repo

    with Repo(base_cwd, search_parent_directories=True) as repo:
        repo.git.set_persistent_git_options(c=list(SAFE_GIT))
        if repo.working_tree_dir is None:  # check_isolation refused it, but the repository may have changed since
            raise UserError(f"Could not create a git worktree: the repository at {repo.git_dir!r} is bare.")
        root = os.path.realpath(repo.working_tree_dir)
        # In this user's private temporary folder: a shared <tmp>/covey-worktrees lets others read the checkout.
        path = private_dir(user_temp_dir() / "worktrees", "covey's worktree folder") / f"{Path(root).name}-{agent_id}"
        branch = f"{BRANCH_PREFIX}{agent_id}"
        # Branch from the sha, not "HEAD": original_head is then exactly what was checked out.
        head = repo.head.commit.hexsha
        try:
            repo.git.worktree("add", "-b", branch, str(path), head)
        except GitCommandError as e:
            raise UserError(f"Could not create a git worktree at {str(path)!r}: {e.stderr.strip()}") from e
    real = os.path.realpath(path)
    rel = os.path.relpath(os.path.realpath(base_cwd), root)
    cwd = os.path.normpath(os.path.join(real, rel))
    return Worktree(path=real, branch=branch, original_head=head, repo_root=root, cwd=cwd)


async def create_worktree(base_cwd: str, agent_id: str) -> Worktree:
    """Check out HEAD on a new branch ``covey/<agent_id>``; git runs in a thread, off the event loop."""
    return await asyncio.to_thread(_create, base_cwd, agent_id)


def _has_changes(wt: Worktree) -> bool:
    from git import Repo

    with Repo(wt.path) as repo:
        if repo.is_dirty(untracked_files=True):
            return True
        # The branch tip counts too: the child may have committed and then checked something else out.
        tips = {repo.head.commit.hexsha, repo.commit(wt.branch).hexsha}
    return tips != {wt.original_head}


def _finish(wt: Worktree) -> WorktreeOutcome:
    from git import GitCommandError, Repo

    kept = WorktreeOutcome(kept=True, path=wt.path, branch=wt.branch)
    if wt.hook:  # a hook made it: covey cannot tell what changed, so it stays (Claude Code keeps it too)
        return kept
    # Any failure keeps the worktree: a stray directory is cheap, a child's lost work is not.
    try:
        if _has_changes(wt):
            return kept
        with Repo(wt.repo_root) as main:
            main.git.set_persistent_git_options(c=list(SAFE_GIT))
            main.git.worktree("remove", "--force", wt.path)
            main.git.branch("-D", wt.branch)
    except Exception as e:  # noqa: BLE001 -- gitpython and gitdb raise many unrelated types
        detail = e.stderr.strip() if isinstance(e, GitCommandError) else str(e)
        return kept.model_copy(update={"reason": f"cleanup failed: {detail or type(e).__name__}"})
    return kept.model_copy(update={"kept": False})


async def finish_worktree(wt: Worktree) -> WorktreeOutcome:
    """Remove an unchanged worktree and its branch; keep (and report) anything else."""
    return await asyncio.to_thread(_finish, wt)


async def finish_worktree_record(worktree: Worktree) -> dict[str, Any] | None:
    """``finish_worktree``, answered as a report records it: the kept one (path, branch,
    why), or None once it is removed."""
    outcome = await finish_worktree(worktree)
    return outcome.model_dump(exclude_none=True) if outcome.kept else None


def _listed_worktrees(main: Repo) -> set[str]:
    lines = main.git.worktree("list", "--porcelain").splitlines()
    return {os.path.realpath(line.split(" ", 1)[1]) for line in lines if line.startswith("worktree ")}


def resume_place_problem(spec: Any) -> str | None:
    """Why a finished agent may not be resumed where it ran, or None: its worktree is gone or
    no longer this repository's on its branch, or its directory no longer exists. A resume
    never silently adopts a place it cannot verify."""
    if spec.worktree is not None and spec.worktree.hook:
        return None if os.path.isdir(spec.worktree.path) else f"The worktree {spec.worktree.path!r} no longer exists."
    if spec.worktree is not None:
        return verify_worktree(spec.worktree.path, spec.worktree.repo_root, spec.worktree.branch)
    if not os.path.isdir(spec.cwd):
        return f"Its working directory {spec.cwd!r} no longer exists."
    return None


def verify_worktree(path: str, expected_root: str, branch: str) -> str | None:
    """On resume: why ``path`` is no longer this repo's worktree on ``branch``, or None (docs/subagents.md#transcripts)."""
    from git import InvalidGitRepositoryError, NoSuchPathError, Repo

    real = os.path.realpath(path)
    if not os.path.isdir(real):
        return f"The worktree {path!r} no longer exists."
    try:
        with Repo(real) as repo, Repo(expected_root) as main:
            # The shared git directory must match: a clone or another repo at the same path is not adopted.
            same_repo = os.path.realpath(repo.common_dir) == os.path.realpath(main.common_dir)
            # The repository must still list it here: a worktree moved by hand is one git has lost track of.
            is_root = os.path.realpath(repo.working_tree_dir or "") == real and real in _listed_worktrees(main)
            on_branch = not repo.head.is_detached and repo.active_branch.name == branch
    except (InvalidGitRepositoryError, NoSuchPathError):
        same_repo = is_root = False
    if not (same_repo and is_root):
        return f"{path!r} is no longer a git worktree of {expected_root!r}."
    if not on_branch:
        return f"The worktree {path!r} is no longer on branch {branch!r}."
    return None
