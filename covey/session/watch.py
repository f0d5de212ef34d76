"""The main agent's events, watched for the death of the session's own actors."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

from covey.errors import AgentUnavailable, CoveyError
from covey.events import Event
from covey.session.runtime import SessionRuntime

OWNER_DEATH_WAIT_S = 2.0
"""How long a main actor's death waits to be explained by its owner's (the registry's)."""


class SessionBroken(CoveyError):
    """One of the session's own actors died: the run ends with an error naming it."""


async def watched(runtime: SessionRuntime, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """``events``, until the main agent's, the registry's or the mailbox's actor dies: then
    ``SessionBroken`` names it. Without the registry or the mailbox no agent can launch,
    finish or be notified, so the run cannot go on and must not hang."""
    gone: dict[asyncio.Future[Any], str] = {
        asyncio.ensure_future(handle.until_gone()): what
        for handle, what in ((runtime.registry, "registry"), (runtime.mailbox, "mailbox"))}
    stream, step = events.__aiter__(), None
    try:
        while True:
            step = asyncio.ensure_future(stream.__anext__())
            await asyncio.wait({step, *gone}, return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                dead = next(task for task in gone if task.done())
                raise SessionBroken(f"covey's {gone[dead]} actor died ({dead.result()})")
            try:
                event = step.result()
            except StopAsyncIteration:
                return
            except AgentUnavailable as exc:
                raise await _explained(gone, exc) from None
            yield event
    finally:
        for task in (step, *gone):
            if task is not None:
                task.cancel()


async def _explained(gone: dict[asyncio.Future[Any], str], exc: AgentUnavailable) -> SessionBroken:
    """The main actor dies with the registry that owns it: name the cause."""
    dead, _ = await asyncio.wait(gone, timeout=OWNER_DEATH_WAIT_S)
    if dead:
        died = next(iter(dead))
        return SessionBroken(f"covey's {gone[died]} actor died ({died.result()})")
    return SessionBroken(f"the main agent's actor died ({exc})")
