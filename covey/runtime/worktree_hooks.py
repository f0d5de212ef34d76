"""Worktrees and the WorktreeCreate / WorktreeRemove hooks (docs/definitions.md#worktree-isolation).

With WorktreeCreate hooks in force for the launching agent, they make the worktree instead of git
(as in Claude Code, for any version control): the hook gets the worktree's ``name`` and prints its
path; a failure, or no path, refuses the launch. covey cannot tell what changed in such a worktree,
so it is kept when its agent ends, as Claude Code keeps it. WorktreeRemove hooks run when a worktree
covey made goes away: after git removed an unchanged one at its agent's end (side effects only), and,
in git's place, for a hook-made one whose launch was refused.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from covey.errors import UserError
from covey.runtime.worktree import Worktree, create_worktree, finish_worktree, finish_worktree_record


def hooks_make_worktrees(hooks: Any, agent_id: str) -> bool:
    """Whether ``agent_id``'s WorktreeCreate hooks make its children's worktrees (no git needed)."""
    return hooks is not None and hooks.makes_worktrees(agent_id)


async def make_worktree(hooks: Any, parent: Any, agent_id: str) -> Worktree:
    """The child's worktree: the hooks' if they make it, else a git worktree of the parent's checkout."""
    if not hooks_make_worktrees(hooks, parent.agent_id):
        return await create_worktree(parent.cwd, agent_id)
    made = await hooks.run_worktree_create(agent_id, agent_id=parent.agent_id, cwd=parent.cwd)
    if made.error is not None:
        raise UserError(f"The worktree was not created: a WorktreeCreate hook failed ({made.error}).")
    path = os.path.realpath(os.path.join(parent.cwd, os.path.expanduser(made.path)))
    if not await asyncio.to_thread(os.path.isdir, path):
        raise UserError(f"The worktree was not created: the WorktreeCreate hook gave {made.path!r}, not a directory.")
    return Worktree(path=path, branch="", original_head="", repo_root="", cwd=path, hook=True)


async def discard_worktree(worktree: Worktree, hooks: Any, agent_id: str) -> None:
    """A refused or failed launch leaves no worktree behind: git removes its own, WorktreeRemove
    hooks a hook-made one (none configured: it stays where the hook put it)."""
    if worktree.hook:
        if hooks is not None:
            await hooks.run_worktree_remove(worktree.path, agent_id=agent_id, cwd=worktree.path)
        return
    if not (await finish_worktree(worktree)).kept and hooks is not None:
        await hooks.run_worktree_remove(worktree.path, agent_id=agent_id)


async def finish_with_hooks(worktree: Worktree, hooks: Any, agent_id: str) -> dict[str, Any] | None:
    """Step 15's worktree: ``finish_worktree_record``, then WorktreeRemove hooks if it was removed."""
    kept = await finish_worktree_record(worktree)
    if kept is None and hooks is not None:
        await hooks.run_worktree_remove(worktree.path, agent_id=agent_id)
    return kept
