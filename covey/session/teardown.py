"""The end of a session: every agent stopped with its cleanup, the SessionEnd hooks, and every
actor the session started killed (or given back to the covey service's pool); and the Interrupt
hooks of a turn the user stopped."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from covey.agent.handle import AgentHandle
from covey.events import ResultEvent
from covey.hooks.runner import HookRegistry
from covey.hooks.session_end import fire_session_end
from covey.ray.cluster import shutdown_if_started
from covey.session import ephemeral
from covey.session.main_agent import transcript

if TYPE_CHECKING:
    from covey.session.core import Session
    from covey.session.watch import SessionBroken

log = logging.getLogger(__name__)

STOP_GRACE_S = 5.0


async def stop(session: Session, reason: str, grace_s: float = STOP_GRACE_S) -> list[dict[str, Any]]:
    """Stop every agent of the session, each with its cleanup (a kept worktree stays, and is
    returned); what does not stop in ``grace_s`` is killed by ``close``."""
    runtime = session.kit.runtime
    if runtime is None:
        return []
    mains = [handle for handle in session.kit.owned if isinstance(handle, AgentHandle)]
    stopping: list[asyncio.Future[Any]] = [asyncio.ensure_future(asyncio.wait_for(main.cancel("killed", reason), grace_s))
                                           for main in mains]
    stopping.append(asyncio.ensure_future(asyncio.wait_for(runtime.registry.stop_all(reason), grace_s * 2)))
    done = await asyncio.gather(*stopping, return_exceptions=True)
    kept: list[dict[str, Any]] = done[-1] if isinstance(done[-1], list) else []
    session.kept_worktrees += kept
    return kept


async def broken(session: Session, exc: SessionBroken, agent_id: str) -> ResultEvent:
    """Stop what is left of a session that lost an actor; its error result."""
    session.kit.lost_actor = True
    await stop(session, str(exc))
    text = f"{exc}: the run cannot go on, and every agent of the session was stopped."
    return ResultEvent.failure(text, session_id=session.session_id, agent_id=agent_id)


async def interrupt(session: Session, main: AgentHandle, reason: str) -> bool:
    """Stop the main agent's turn; the Interrupt hooks run while it stops (they cannot hold it up)."""
    stopped, _ = await asyncio.gather(main.cancel("killed", reason), fire_interrupt(session))
    return bool(stopped)


async def fire_interrupt(session: Session) -> None:
    """The session's Interrupt hooks (the user stopped the turn), with the fields the TypeScript
    SDK 0.3.337's CLI sends: ``source: "user"``, ``reason: "stop"``, ``via: "client"``."""
    groups = (session.settings.hooks or {}).get("Interrupt")
    if not groups:
        return
    hooks = HookRegistry({"Interrupt": groups}, project_dir=session.config_root, env=session.options.env,
                         session_id=session.session_id, transcript_path=transcript(session),
                         callback=session.options.on_hook_callback, mode_of=lambda: session.policy.mode)
    try:
        await hooks.run_interrupt()
    except Exception:  # a hook never keeps the turn from stopping
        log.exception("Interrupt hooks failed")


def close(session: Session, reason: str = "other") -> None:
    """Run the SessionEnd hooks (``reason``: Claude Code's, ``other`` for a run that simply
    ended), then kill every actor the session started (pooled agents die with the registry that
    owns them; a served session's borrowed ones are ended by the service's pool), then Ray if
    covey started it, then its debug log and (a session not kept) its files."""
    kit = session.kit
    if session.turns and not session.ended:
        session.ended = True
        fire_session_end(session.settings.hooks, reason=reason, project_dir=session.config_root,
                         env=session.options.env, session_id=session.session_id, transcript_path=transcript(session),
                         mode=session.policy.mode)
    if kit.lender is not None and kit.runtime is not None:
        # The kit's actors are the pool's: it kills or reuses them with what this session held.
        kit.lender.end_session(session.session_id, reuse_kit=not (kit.runtime.teams or kit.lost_actor))
    for handle in reversed(kit.owned):
        handle.kill()
    kit.owned.clear()
    kit.runtime = None
    shutdown_if_started(kit.started_ray)
    kit.started_ray = False
    discard(session)  # last: the SessionEnd hooks may read its transcript


def discard(session: Session) -> None:
    """What the session keeps open outside Ray: its debug log, and a session not kept's files."""
    if session.debug is not None:
        session.debug.close()
        session.debug = None
    ephemeral.remove(session.private)
