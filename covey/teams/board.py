"""One team's collaborative task board (docs/teams.md), as plain Python; the Ray actor wraps one.

What is atomic, exactly: every public method is one critical section. Writers
hold the board's ``asyncio.Lock`` and never await inside it, so a method's reads
and writes happen in one step of the event loop (in memory, or in the Ray
async actor, which runs all its coroutines on one thread):

- ``claim`` re-reads the task under the lock; the checks and the write of owner
  and ``in_progress`` are one step, so no two claimers can both succeed.
- ``claim_next`` picks the first free task and claims it in the same step.
- ``update`` validates the whole patch (task, dependency ids, cycles) first and
  then writes the fields and both ends of every new edge: all of it or none.
- ``release_owner`` resets all unfinished tasks of one owner together.

Nothing spans calls: a read followed by an update from a caller is two steps,
and another agent may act in between. That is why claims are their own method.
"""

from __future__ import annotations

import builtins
import asyncio
from typing import Any

from pydantic import ValidationError

from covey.teams.tasks import (
    Claimed, ClaimReason, ClaimRefused, ClaimResult, Deleted, Task, TaskPatch, Updated, UpdateError, UpdateResult,
)


class TaskBoard:
    def __init__(self) -> None:
        self._tasks: dict[str, Task] = {}
        self._next_id = 1  # ids are never reused, even after a delete
        self._lock = asyncio.Lock()

    async def create(
        self, subject: str, description: str, active_form: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Task:
        """A new task: pending, unowned, no dependencies. Creating it runs nothing."""
        async with self._lock:
            task = Task(id=str(self._next_id), subject=subject, description=description,
                        active_form=active_form, metadata=metadata or {})
            self._next_id += 1
            self._tasks[task.id] = task
            return task.model_copy(deep=True)

    async def get(self, task_id: str) -> Task | None:
        task = self._tasks.get(task_id)
        return task.model_copy(deep=True) if task else None

    async def blocked(self, task: Task | str) -> builtins.list[str]:
        """Ids of the task's blockers that are not completed yet ([] means free to start)."""
        current = self._tasks.get(task if isinstance(task, str) else task.id)
        return self._open_blockers(current) if current else []

    async def claim(self, task_id: str, owner: str, *, check_busy: bool = True) -> ClaimResult:
        async with self._lock:
            return self._claim(task_id, owner, check_busy)

    async def claim_next(self, owner: str, *, check_busy: bool = True) -> ClaimResult:
        """Claim the first pending, unowned task whose blockers are all completed."""
        async with self._lock:
            free = [t for t in self._ordered() if t.status == "pending" and t.owner is None
                    and not self._open_blockers(t)]
            if not free:
                return ClaimRefused(reason="no_task_available", task_id=None,
                                    message="no pending, unowned, unblocked task")
            return self._claim(free[0].id, owner, check_busy)

    async def update(self, task_id: str, patch: TaskPatch | dict[str, Any]) -> UpdateResult:
        async with self._lock:
            try:
                patch = TaskPatch.model_validate(patch, from_attributes=True)
            except ValidationError as exc:
                return UpdateError(reason="invalid_patch", task_id=task_id, message=str(exc))
            if task_id not in self._tasks:
                return UpdateError(reason="task_not_found", task_id=task_id,
                                   message=f"no task {task_id!r} on this board")
            if patch.status == "deleted":
                return self._delete(task_id)
            edges = [(task_id, b) for b in patch.add_blocks] + [(b, task_id) for b in patch.add_blocked_by]
            refusal = self._edge_refusal(task_id, edges)
            if refusal:
                return refusal
            changed = self._apply(self._tasks[task_id], patch, edges)
            return Updated(task=self._tasks[task_id].model_copy(deep=True), changed=changed)

    async def release_owner(self, owner: str) -> builtins.list[Task]:
        """Put the owner's unfinished tasks back to pending and unowned (it exited or was killed)."""
        async with self._lock:
            released = [t for t in self._ordered() if t.owner == owner and t.status != "completed"]
            for task in released:
                task.owner, task.status = None, "pending"
            return [t.model_copy(deep=True) for t in released]

    async def list(self) -> builtins.list[Task]:
        return [t.model_copy(deep=True) for t in self._ordered()]

    def _claim(self, task_id: str, owner: str, check_busy: bool) -> ClaimResult:
        task = self._tasks.get(task_id)

        def refuse(reason: ClaimReason, message: str) -> ClaimRefused:
            return ClaimRefused(reason=reason, task_id=task_id, message=message)

        if task is None:
            return refuse("task_not_found", f"no task {task_id!r} on this board")
        if task.owner and task.owner != owner:
            return refuse("already_claimed", f"task {task_id!r} is owned by {task.owner!r}")
        if task.status == "completed":
            return refuse("already_resolved", f"task {task_id!r} is already completed")
        if blockers := self._open_blockers(task):
            return refuse("blocked", f"task {task_id!r} waits for unfinished task(s) {', '.join(blockers)}")
        busy = [t.id for t in self._tasks.values()
                if t.owner == owner and t.id != task_id and t.status != "completed"]
        if check_busy and busy:
            return refuse("agent_busy", f"{owner!r} still holds unfinished task(s) {', '.join(busy)}")
        task.owner, task.status = owner, "in_progress"
        return Claimed(task=task.model_copy(deep=True))

    def _delete(self, task_id: str) -> Deleted:
        task = self._tasks.pop(task_id)
        for other in self._tasks.values():
            other.blocks = [i for i in other.blocks if i != task_id]
            other.blocked_by = [i for i in other.blocked_by if i != task_id]
        return Deleted(task=task)

    def _edge_refusal(self, task_id: str, edges: builtins.list[tuple[str, str]]) -> UpdateError | None:
        """Check every new (blocker, blocked) edge against the board plus the edges before it."""
        follows = {i: set(t.blocks) for i, t in self._tasks.items()}

        def error(reason: str, message: str) -> UpdateError:
            return UpdateError(reason=reason, task_id=task_id, message=message)

        for blocker, blocked in edges:
            if blocker not in self._tasks or blocked not in self._tasks:
                missing = blocker if blocker not in self._tasks else blocked
                return error("unknown_dependency", f"no task {missing!r} on this board")
            if blocker == blocked:
                return error("self_dependency", f"task {task_id!r} cannot block itself")
            if _reaches(follows, blocked, blocker):
                return error("cycle", f"task {blocker!r} blocking {blocked!r} would make a cycle")
            follows[blocker].add(blocked)
        return None

    def _apply(self, task: Task, patch: TaskPatch, edges: builtins.list[tuple[str, str]]) -> builtins.list[str]:
        changed = []
        for field in ("subject", "description", "active_form", "status"):
            value = getattr(patch, field)
            if value is not None and value != getattr(task, field):
                setattr(task, field, value)
                changed.append(Task.model_fields[field].alias or field)
        if patch.owner is not None and (patch.owner or None) != task.owner:
            task.owner = patch.owner or None
            changed.append("owner")
        if patch.metadata:
            task.metadata.update(patch.metadata)
            task.metadata = {k: v for k, v in task.metadata.items() if v is not None}
            changed.append("metadata")
        for blocker, blocked in edges:
            _add(self._tasks[blocker].blocks, blocked)
            _add(self._tasks[blocked].blocked_by, blocker)
        changed += [name for name, ids in (("addBlocks", patch.add_blocks),
                                           ("addBlockedBy", patch.add_blocked_by)) if ids]
        return changed

    def _open_blockers(self, task: Task) -> builtins.list[str]:
        return [i for i in task.blocked_by if i in self._tasks and self._tasks[i].status != "completed"]

    def _ordered(self) -> builtins.list[Task]:
        return sorted(self._tasks.values(), key=lambda t: int(t.id))


def _add(ids: list[str], new: str) -> None:
    if new not in ids:
        ids.append(new)


def _reaches(follows: dict[str, set[str]], start: str, goal: str) -> bool:
    """Whether ``goal`` can be reached from ``start`` along "blocks" edges."""
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(follows.get(node, ()))
    return False
