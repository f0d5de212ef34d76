"""A session whose own actor dies ends its run with an error naming it (no Ray: fake handles)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from covey.errors import AgentUnavailable
from covey.session import SessionBroken
from covey.session.watch import watched


class _Actor:
    def __init__(self, dies_after_s: float | None = None) -> None:
        self.dies_after_s = dies_after_s

    async def until_gone(self) -> str:
        if self.dies_after_s is None:
            await asyncio.Event().wait()
        await asyncio.sleep(self.dies_after_s)
        return "The actor died unexpectedly"


def _session(registry: _Actor, mailbox: _Actor) -> SimpleNamespace:
    """Only what ``watched`` reads of a session's runtime."""
    return SimpleNamespace(registry=registry, mailbox=mailbox)


async def _events(n: int, pause_s: float = 0.0, then: BaseException | None = None):
    for i in range(n):
        await asyncio.sleep(pause_s)
        yield i
    if then is not None:
        raise then


async def test_events_pass_through_while_the_session_actors_live():
    session = _session(_Actor(), _Actor())
    assert [e async for e in watched(session, _events(3))] == [0, 1, 2]


@pytest.mark.parametrize("dead", ["registry", "mailbox"])
async def test_a_dead_session_actor_ends_the_stream_naming_it(dead):
    actors = {"registry": _Actor(), "mailbox": _Actor(), dead: _Actor(dies_after_s=0.05)}
    session = _session(actors["registry"], actors["mailbox"])
    seen = []
    with pytest.raises(SessionBroken, match=f"covey's {dead} actor died"):
        async for event in watched(session, _events(1000, pause_s=0.01)):
            seen.append(event)
    assert 0 < len(seen) < 1000  # it did not wait for the stream to end (it may never)


async def test_a_main_actor_that_dies_with_the_registry_is_explained_by_it():
    session = _session(_Actor(dies_after_s=0.1), _Actor())
    with pytest.raises(SessionBroken, match="covey's registry actor died"):
        async for _ in watched(session, _events(1, then=AgentUnavailable("agent actor 'main' died"))):
            pass


async def test_a_main_actor_that_dies_alone_is_named():
    session = _session(_Actor(), _Actor())
    with pytest.raises(SessionBroken, match="the main agent's actor died"):
        async for _ in watched(session, _events(1, then=AgentUnavailable("agent actor 'main' died"))):
            pass
