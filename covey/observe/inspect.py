"""Looking into running sessions from another process: ``covey ps / tree / logs / kill / team``.

Every session's actors are named ``covey:<session>:<role>`` in the ``covey``
namespace, so any driver connected to the same Ray finds them.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import ray

from covey.actors.mailbox import MailboxHandle
from covey.actors.team import BoardHandle, RosterHandle
from covey.errors import UserError
from covey.observe.live import tree_lines
from covey.ray_runtime import NAMESPACE, stay_on_loopback
from covey.registry.actor import RegistryHandle


def connect(address: str | None) -> None:
    import logging

    if ray.is_initialized():
        return
    if _on_loopback(address or "auto"):
        stay_on_loopback()  # else Ray swaps 127.0.0.1 for this machine's network address and misses it
    try:
        ray.init(address=address or "auto", namespace=NAMESPACE, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, RuntimeError) as exc:
        raise UserError(f"no running Ray to inspect ({exc}); covey runs are visible while they run") from None


def _on_loopback(address: str) -> bool:
    """Whether the Ray that ``address`` names (``auto``: the one this machine's Ray temp
    dir records, as ``covey -p`` starts it) listens on 127.0.0.1."""
    from ray._private.services import get_ray_address_from_environment

    try:
        found = get_ray_address_from_environment(address, None)
    except Exception:  # nothing found: ray.init says so below
        return False
    host = str(found or "").rsplit(":", 1)[0]
    return host in ("127.0.0.1", "localhost")


def sessions() -> dict[str, RegistryHandle]:
    """Running sessions by id prefix."""
    found = {}
    for entry in ray.util.list_named_actors(all_namespaces=True):
        name, namespace = entry["name"], entry["namespace"]
        if namespace == NAMESPACE and name.startswith("covey:") and name.endswith(":registry"):
            prefix = name.split(":")[1]
            found[prefix] = RegistryHandle(ray.get_actor(name, namespace=NAMESPACE), name)
    return found


def pick(session: str | None) -> tuple[str, RegistryHandle]:
    running = sessions()
    if not running:
        raise UserError("no covey session is running on this Ray")
    if session is None:
        if len(running) > 1:
            raise UserError(f"several sessions are running ({', '.join(running)}); name one")
        return next(iter(running.items()))
    matches = {k: v for k, v in running.items() if k.startswith(session[:8])}
    if not matches:
        raise UserError(f"no running session {session!r}; running: {', '.join(running)}")
    return next(iter(matches.items()))


async def ps_text() -> str:
    lines = []
    for prefix, registry in sessions().items():
        records = await registry.records()
        live = sum(r.live for r in records)
        cost = sum(r.cost_usd for r in records)
        lines.append(f"session {prefix}: {len(records)} agents, {live} running, ${cost:.4f}")
        lines += [f"  {r.agent_id}  {r.agent_type:<16} {r.status:<9} {r.description}" for r in records]
    return "\n".join(lines) or "no covey session is running"


async def tree_text(session: str | None) -> str:
    _, registry = pick(session)
    return "\n".join(tree_lines(await registry.tree()))


async def find_record(agent_id: str) -> tuple[RegistryHandle, Any]:
    for registry in sessions().values():
        if (record := await registry.record(agent_id)) is not None:
            return registry, record
    raise UserError(f"no agent {agent_id!r} in any running session")


async def kill(agent_id: str) -> str:
    registry, record = await find_record(agent_id)
    if not await registry.kill_agent(agent_id, "killed with covey kill"):
        return f"{agent_id} is not running ({record.status})"
    return f"{agent_id} killed; its owner is notified"


async def logs(agent_id: str, follow: bool) -> None:
    _, record = await find_record(agent_id)
    if not record.output_file or not Path(record.output_file).exists():
        raise UserError(f"{agent_id} has no transcript on this machine ({record.output_file})")
    with open(record.output_file, encoding="utf-8") as handle:
        while True:
            line = handle.readline()
            if line:
                sys.stdout.write(line)
                sys.stdout.flush()
            elif not follow:
                return
            else:
                time.sleep(0.3)


async def team_text(session: str | None) -> str:
    prefix, registry = pick(session)
    lines = []
    for entry in ray.util.list_named_actors(all_namespaces=True):
        name = entry["name"]
        if entry["namespace"] == NAMESPACE and name.startswith(f"{prefix}/team/") and name.endswith("/roster"):
            team = name.split("/")[2]
            roster = RosterHandle(ray.get_actor(name, namespace=NAMESPACE))
            board = BoardHandle(ray.get_actor(name[: -len("roster")] + "board", namespace=NAMESPACE))
            mailbox = MailboxHandle(ray.get_actor(f"covey:{prefix}:mailbox", namespace=NAMESPACE))
            lines += await _team_lines(team, roster, board, mailbox)
    return "\n".join(lines) or f"session {prefix} has no team"


async def _team_lines(team: str, roster: Any, board: Any, mailbox: Any) -> list[str]:
    lines = [f"team {team}", "  members:"]
    for member in await roster.members():
        pending = await mailbox.pending(member.agent_id)
        lines.append(f"    {member.name:<12} {member.agent_id}  {member.agent_type}  {pending} unread message(s)")
    lines.append("  tasks:")
    for task in await board.list():
        blocked = f" blocked by {', '.join(task.blocked_by)}" if task.blocked_by else ""
        lines.append(f"    #{task.id} [{task.status}] {task.subject} (owner: {task.owner or 'none'}){blocked}")
    return lines


def run(coro: Any) -> Any:
    return asyncio.run(coro)
