"""The launch checks, in the documented order (docs/subagents.md#limits-the-registry-actor).

Each check reads the registry's books and the request and answers a ``Refused`` or
None; ``refusal`` is the first that refuses. Plain functions: the core runs them inside
one synchronous call, so no other call interleaves between the check and the record.
"""

from __future__ import annotations

from typing import Callable, Mapping, Protocol

from covey.runtime.answers import Refused
from covey.runtime.limits import Limits
from covey.runtime.records import LaunchRequest, RunRecord


class LaunchBooks(Protocol):
    """What the launch checks read of the registry's books (``Registry`` passes itself)."""

    @property
    def limits(self) -> Limits: ...
    @property
    def records(self) -> Mapping[str, RunRecord]: ...
    def live_subagents(self) -> int: ...
    def session_cost_usd(self) -> float: ...


Check = Callable[[LaunchBooks, LaunchRequest], "Refused | None"]


def refusal(core: LaunchBooks, request: LaunchRequest, checks: tuple[Check, ...] | None = None) -> Refused | None:
    """The first launch check that fails (of ``checks``, default all); None if all pass."""
    return next((refused for check in checks or CHECKS if (refused := check(core, request)) is not None), None)


def check_depth(core: LaunchBooks, request: LaunchRequest) -> Refused | None:
    if request.depth > core.limits.max_depth:
        return Refused(kind="depth", text=(
            f"Cannot spawn a sub-agent: the spawn depth limit is {core.limits.max_depth} "
            f"(COVEY_MAX_SUBAGENT_SPAWN_DEPTH) and this child would be at depth {request.depth}. "
            "Do this work yourself with your own tools."
        ))
    return None


def check_concurrency(core: LaunchBooks, request: LaunchRequest) -> Refused | None:
    """Refuses past the limit. (A background launch while others are queued queues behind
    them instead of jumping the queue: ``SpawnQueue.waits_its_turn``.)"""
    live = core.live_subagents()
    if live >= core.limits.max_concurrent:
        return Refused(kind="concurrency", text=(
            f"Cannot spawn a sub-agent: {live} agents are running and the concurrency limit is "
            f"{core.limits.max_concurrent}. Do not retry this call: wait for the running agents' "
            "notifications, or do the work yourself."
        ))
    return None


def check_budget(core: LaunchBooks, request: LaunchRequest) -> Refused | None:
    if (spent := budget_spent(core)) is not None:
        return Refused(kind="budget", text=(
            f"Cannot spawn a sub-agent: {spent}. Finish the task with the results you already have."
        ))
    return None


def budget_spent(core: LaunchBooks) -> str | None:
    """What the session budget's refusal says (``the session budget of $B is spent ($S used)``);
    None while it is not spent, or there is none."""
    budget = core.limits.budget_usd
    spent = core.session_cost_usd()
    if budget is not None and spent >= budget:
        return f"the session budget of ${budget:.2f} is spent (${spent:.4f} used)"
    return None


def check_type(core: LaunchBooks, request: LaunchRequest) -> Refused | None:
    if request.denied_by is not None:
        rule, source = request.denied_by
        return Refused(kind="type", text=(
            f"Agent type {request.agent_type!r} is denied by the permission rule {rule!r} from {source}."
        ))
    if not request.type_known:
        return Refused(kind="type", text=f"Agent type {request.agent_type!r} not found.")
    return None


def check_place(core: LaunchBooks, request: LaunchRequest) -> Refused | None:
    if request.worktree_with_cwd:
        return Refused(kind="place", text="'cwd' and isolation: \"worktree\" cannot be used together; pick one.")
    if request.cwd_problem:
        return Refused(kind="place", text=request.cwd_problem)
    return None


def check_role(core: LaunchBooks, request: LaunchRequest) -> Refused | None:
    parent = core.records.get(request.parent_agent_id)
    role = parent.role if parent else request.caller_role
    if request.spawns_teammate and role in ("teammate", "in_process_teammate"):
        return Refused(kind="role", text="A teammate cannot create named teammates: the team roster is flat.")
    if request.background and role == "in_process_teammate":
        return Refused(kind="role", text=(
            "An in-process teammate cannot start background agents; run the sub-agent synchronously."
        ))
    return None


CHECKS: tuple[Check, ...] = (check_depth, check_concurrency, check_budget, check_type, check_place, check_role)
"""In the documented order: limits first, then what the model asked for."""
