"""The service's shared pool on a live Ray: served sessions borrow a ready kit and warm agent
actors, give them back, and a session that ends takes nothing of the pool with it."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import pytest
import ray

from covey.events import TaskNotification
from covey.pool.shared_pool import SharedPoolHandle
from covey.session import Session
from tests.session.scripts import CHILD, MAIN, agent_call, rule, scripted

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_session")]


@pytest.fixture
async def pool(monkeypatch):
    name = f"covey:pool:test-{secrets.token_hex(3)}"
    monkeypatch.setattr("covey.session.kit.pool_name", lambda service_dir: name)
    handle = SharedPoolHandle.create(name, ray.get_runtime_context().get_node_id(),
                                     floors={"home": 2, "kit": 1})
    await handle.ready()
    yield handle
    await handle.shutdown()
    handle.kill()


def _model():
    return scripted(
        rule(CHILD, {"text": "CHILD_DONE"}),
        rule({**MAIN, "last_message_contains": "<task-notification>"}, {"text": "MAIN_DONE"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": agent_call("CHILD_PROMPT", background=True)}),
    )


async def _served_run(tmp_path: Path) -> tuple[Session, list, str]:
    """A served session's run: the session, its events and its registry actor's id."""
    (tmp_path / "proj").mkdir(exist_ok=True)
    session = Session(cwd=str(tmp_path / "proj"), model=_model(), service=True, max_turns=6,
                      transcript_dir=str(tmp_path / "transcripts"))
    try:
        events = [e async for e in session.stream("go")]
        registry_id = session.runtime.registry.actor._actor_id.hex()
    finally:
        session.close()
    return session, events, registry_id


async def _settled(pool) -> dict:
    """The pool's figures once the last session's end (a tell) has been handled."""
    for _ in range(100):
        stats = await pool.stats()
        if stats["kit"]["lent"] == 0 and stats["home"]["lent"] == 0:
            return stats
        await asyncio.sleep(0.05)
    return stats


async def test_served_sessions_borrow_ready_actors_and_give_them_back(pool, tmp_path):
    before = await pool.stats()
    first, events, first_registry = await _served_run(tmp_path)
    assert events[-1].result == "MAIN_DONE"
    assert sum(isinstance(e, TaskNotification) for e in events) == 1
    assert first.session_id == events[0].session_id  # the session took its kit's id

    await _settled(pool)
    second, events, second_registry = await _served_run(tmp_path)
    assert events[-1].result == "MAIN_DONE" and second.session_id != first.session_id
    # The second session ran on the first one's kit, emptied for it: nothing was created.
    assert second_registry == first_registry
    assert [e.task_id for e in events if isinstance(e, TaskNotification)] != []
    stats = await _settled(pool)
    # Both runs ran on the floor's two agent actors, given back after each run.
    assert stats["home"]["ready"] == 2 and stats["home"]["high_water"] == 2
    assert stats["kit"]["ready"] == 1 and stats["created"] == before["created"]


async def test_ending_a_session_kills_the_actors_it_still_held(pool, tmp_path):
    (tmp_path / "proj").mkdir()
    session = Session(cwd=str(tmp_path / "proj"), model=_model(), service=True)
    runtime = await session.start()
    held = await runtime.registry.take("home")
    assert (await pool.stats())["home"]["lent"] == 1
    session.close()
    for _ in range(50):
        if (await pool.stats())["home"]["lent"] == 0:
            break
        await asyncio.sleep(0.1)
    assert (await pool.stats())["home"]["lent"] == 0
    with pytest.raises(Exception):
        await asyncio.wait_for(held.node_id(), 10)
