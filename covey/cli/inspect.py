"""Looking into running sessions from another process: ``covey ps / tree / logs / kill / team``.

Every session's actors are named ``covey:<session>:<role>`` in the ``covey``
namespace, so any driver connected to the same Ray finds them. Which Rays to
look into: the one ``--address`` / ``RAY_ADDRESS`` names, else each Ray covey
started for this user (``covey.ray.local``), joined one after another.
"""

from __future__ import annotations

import asyncio
import logging
import os
import textwrap
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

import ray

from covey.errors import AgentUnavailable, UserError
from covey.observe.live import STATUS_STYLES, AgentTable, rate_wait_text, tree_lines
from covey.observe.tables import drawn, on_terminal, table_lines
from covey.pool.shared_pool import KIT_NAME_PREFIX
from covey.ray import local as local_rays
from covey.ray.cluster import NAMESPACE, join
from covey.ray.local import LocalRay
from covey.registry.handle import RegistryHandle
from covey.teams.team_actors import BoardHandle, RosterHandle


@dataclass(frozen=True)
class Target:
    """A Ray to inspect: one named by ``--address`` / ``RAY_ADDRESS``, or one covey started."""

    address: str
    local: LocalRay | None = None

    def label(self) -> str:
        return f"ray {self.address} (covey pid {self.local.pid})" if self.local else f"ray {self.address}"


def targets(address: str | None) -> list[Target]:
    """The Rays to look into: the named one, else every live covey-started Ray of this user.

    Never Ray's ``auto``: that joins whatever Ray runs on the machine, someone else's included.
    """
    if ray.is_initialized():  # a notebook or test already joined one: inspect that
        return [Target(ray.get_runtime_context().gcs_address)]
    if named := address or os.environ.get("RAY_ADDRESS"):
        return [Target(named)]
    if found := [Target(entry.gcs_address, entry) for entry in local_rays.live()]:
        return found
    raise UserError(f"no covey run is active for this user (none recorded in {local_rays.run_dir()}); "
                    "a covey -p run is visible while it runs, or name a Ray with --address")


@contextmanager
def joined(target: Target) -> Iterator[None]:
    """Connected to ``target`` inside the block; one Ray at a time, since a driver joins only one."""
    if ray.is_initialized():
        yield
        return
    connect(target)
    try:
        yield
    finally:
        ray.shutdown()


def connect(target: Target) -> None:
    token_path = target.local.token_path if target.local else None
    try:
        join(target.address, token_path, namespace=NAMESPACE, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, RuntimeError) as exc:
        ray.shutdown()  # leave no half-made connection in the way of the next Ray
        raise UserError(f"cannot join {target.label()}: {exc}") from None


def ps(address: str | None) -> str:
    """Every session with its agents, from each Ray in turn (labelled when there are several)."""
    found = targets(address)
    parts = []
    for target in found:
        try:
            with joined(target):
                text = run(ps_text())
        except UserError as exc:  # one broken Ray must not hide the others
            text = str(exc)
        parts.append(f"{target.label()}\n" + textwrap.indent(text, "  ") if len(found) > 1 else text)
    return "\n".join(parts)


def in_session(address: str | None, session: str | None, show: Callable[[str, RegistryHandle], Awaitable[str]]) -> str:
    """``show`` the one session meant (named by id prefix, or the only one running) on whichever Ray runs it."""
    shown, running, meant = [], [], []
    for target in targets(address):
        with joined(target):
            for prefix, registry in run(running_sessions()).items():
                running.append(prefix)
                if session is None or prefix.startswith(session[:8]):  # the id, or a start of it
                    meant.append(prefix)
                    shown.append(run(show(prefix, registry)))
    if not running:
        raise UserError("no covey session is running")
    if not shown:
        raise UserError(f"no running session {session!r}; running: {', '.join(running)}")
    if len(shown) > 1 and session is not None:
        raise UserError(f"{session!r} is the start of several running sessions' ids ({', '.join(meant)}): "
                        "give more of it")
    if len(shown) > 1:
        raise UserError(f"several sessions are running ({', '.join(running)}); name one")
    return shown[0]


def with_agent(address: str | None, agent_id: str, act: Callable[[RegistryHandle, Any], Awaitable[Any]]) -> Any:
    """``act`` on the agent's registry and record, on the Ray whose session has it (agent ids are unique)."""
    for target in targets(address):
        with joined(target):
            if found := run(_find(agent_id)):
                return run(act(*found))
    raise UserError(f"no agent {agent_id!r} in any running session")


def registries() -> list[RegistryHandle]:
    """Every session registry on this Ray: a session's own, or a covey service's kit (one that
    ends between the listing and the lookup is left out)."""
    found = []
    for entry in ray.util.list_named_actors(all_namespaces=True):
        name = entry["name"]
        if entry["namespace"] != NAMESPACE or not (name.startswith("covey:") and name.endswith(":registry")):
            continue
        try:
            found.append(RegistryHandle(ray.get_actor(name, namespace=NAMESPACE), name))
        except ValueError:  # it ended since the listing
            continue
    return found


async def running_sessions() -> dict[str, RegistryHandle]:
    """Running sessions by session id prefix: a session's own registry, or a covey service's
    kit while it serves one (a kit serves one session after another, and holds no record
    while it waits for the next). A registry that ends while it is asked (its session ended,
    or the service let an idle kit go) is not running: it is left out, not an error."""
    found = {}
    for registry in registries():
        try:
            if registry.name.startswith(KIT_NAME_PREFIX) and not await registry.records():
                continue  # a kit waiting for its next session
            session_id, _mailbox = await registry.session()
        except AgentUnavailable:
            continue
        found[session_id[:8]] = registry
    return found


async def ps_text() -> str:
    lines = []
    for prefix, registry in (await running_sessions()).items():
        try:
            lines += session_lines(prefix, await registry.records())
        except AgentUnavailable:  # the session ended since it was found
            continue
    return "\n".join(lines) or "no covey session is running"


def session_lines(prefix: str, records: list[Any]) -> list[str]:
    """One session in ``covey ps``: how many agents run and wait in the queue (docs/subagents.md#queued-spawns),
    what it spent, then one line per agent, queued ones in their launch order."""
    live, queued = sum(r.live for r in records), sum(r.status == "queued" for r in records)
    cost = sum(r.cost_usd for r in records)
    waiting = f", {queued} queued" if queued else ""
    lines = [f"session {prefix}: {len(records)} agents, {live} running{waiting}, ${cost:.4f}"]
    rows = [[r.agent_id, r.agent_type, r.status, r.description, _notes(r)] for r in records]
    return lines + table_lines(rows, ("bold", "", STATUS_STYLES, "", "dim"), whole=3)


def _notes(record: Any) -> str:
    """What ``covey ps`` says after an agent's description: its rate-limit wait, its last summary,
    why it is queued."""
    notes = [f"⏸ {wait}" if (wait := rate_wait_text(record.rate_wait, record.status)) else "",
             f"· {record.summary}" if record.summary and record.live else "",
             f"({QUEUED_FOR[why]})" if record.status == "queued" and (why := record.queued_for) else "",
             f"({record.waiting_for})" if record.waiting_for and record.live else ""]
    return "  ".join(note for note in notes if note)


QUEUED_FOR = {"concurrency": "waits: the concurrency limit", "active": "waits: the agents at work"}
"""Why a queued agent waits, in ``covey ps`` (``RunRecord.queued_for``)."""


async def tree_text(prefix: str, registry: RegistryHandle) -> str:
    """The session's agent tree: on a terminal the live view's table, fitted to its width; else
    one plain line an agent."""
    tree = await registry.tree()
    return "\n".join(drawn(AgentTable(tree)) if tree and on_terminal() else tree_lines(tree))


async def _find(agent_id: str) -> tuple[RegistryHandle, Any] | None:
    """The agent ``agent_id`` names: its id, or a start of it (``agent-`` may be left out) that no
    other agent's id shares; a start several share is refused, naming them."""
    starts: list[tuple[RegistryHandle, Any]] = []
    for registry in registries():
        try:
            if (record := await registry.record(agent_id)) is not None:
                return registry, record
            starts += [(registry, r) for r in await registry.records() if _starts(r.agent_id, agent_id)]
        except AgentUnavailable:  # its session ended since the listing
            continue
    if len(starts) > 1:
        names = ", ".join(sorted(str(record.agent_id) for _, record in starts))
        raise UserError(f"{agent_id!r} is the start of several agents' ids ({names}): give more of it")
    return starts[0] if starts else None


def _starts(agent_id: str, given: str) -> bool:
    return bool(given) and (agent_id.startswith(given) or agent_id.removeprefix("agent-").startswith(given))


async def kill(agent_id: str) -> str:
    """Kill an agent of a session on the Ray this process has joined."""
    if (found := await _find(agent_id)) is None:
        raise UserError(f"no agent {agent_id!r} in any running session")
    return await kill_agent(*found)


async def kill_agent(registry: RegistryHandle, record: Any) -> str:
    if not await registry.kill_agent(record.agent_id, "killed with covey kill"):
        return f"{record.agent_id} is not running ({record.status})"
    return f"{record.agent_id} killed; its owner is notified"


async def transcript(registry: RegistryHandle, record: Any) -> Path:
    if not record.output_file or not Path(record.output_file).exists():
        raise UserError(f"{record.agent_id} has no transcript on this machine ({record.output_file})")
    return Path(record.output_file)


async def team_text(prefix: str, registry: RegistryHandle) -> str:
    lines = []
    for entry in ray.util.list_named_actors(all_namespaces=True):
        name = entry["name"]
        if entry["namespace"] == NAMESPACE and name.startswith(f"{prefix}/team/") and name.endswith("/roster"):
            team = name.split("/")[2]
            roster = RosterHandle(ray.get_actor(name, namespace=NAMESPACE))
            board = BoardHandle(ray.get_actor(name[: -len("roster")] + "board", namespace=NAMESPACE))
            mailbox = (await registry.session())[1]
            lines += await _team_lines(team, roster, board, mailbox)
    return "\n".join(lines) or f"session {prefix} has no team"


async def _team_lines(team: str, roster: Any, board: Any, mailbox: Any) -> list[str]:
    members = [[member.name, member.agent_id, member.agent_type,
                f"{await mailbox.pending(member.agent_id)} unread message(s)"] for member in await roster.members()]
    tasks = [[f"#{task.id}", f"[{task.status}]", task.subject, f"(owner: {task.owner or 'none'})",
              f"blocked by {', '.join(task.blocked_by)}" if task.blocked_by else ""] for task in await board.list()]
    return [f"team {team}", "  members:", *table_lines(members, ("bold",), whole=4, indent=4),
            "  tasks:", *table_lines(tasks, ("dim", "", "", "", "yellow"), whole=2, indent=4)]


def run(coro: Any) -> Any:
    return asyncio.run(coro)
