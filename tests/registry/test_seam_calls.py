"""Calls across the registry seam as the callers make them, through the real ``RegistryHandle``
(its actor stubbed): a caller and the handle disagreeing on arguments fails here."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from covey.registry.handle import RegistryHandle
from covey.session import Session
from covey.tools.base import ToolContext, ToolServices
from covey.tools.shells import TaskStop


class _Method:
    def __init__(self, actor: "_RecordingActor", name: str) -> None:
        self.actor, self.name = actor, name

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        self.actor.calls.append((self.name, *args))
        answer = asyncio.get_running_loop().create_future()  # awaitable, as Ray's object ref is
        answer.set_result(True)
        return answer


class _RecordingActor:
    """Stands for the registry actor: each method call is recorded (as Ray's ``.remote``) and answers True."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __getattr__(self, name: str) -> _Method:
        return _Method(self, name)


def _registry() -> tuple[RegistryHandle, _RecordingActor]:
    actor = _RecordingActor()
    return RegistryHandle(actor, "registry"), actor


async def test_task_stop_on_a_background_agent_kills_it_through_the_handle(tmp_path):
    registry, actor = _registry()
    ctx = ToolContext(agent_id="a", cwd=Path(tmp_path), services=ToolServices(runtime=SimpleNamespace(registry=registry)))
    tool = TaskStop()
    result = await tool.run(tool.input_model.model_validate({"task_id": "agent-0123456789abcdef"}), ctx)
    assert not result.is_error, result.content
    assert actor.calls == [("kill_agent", "agent-0123456789abcdef", "killed", "stopped by TaskStop")]


async def test_the_sdks_stop_task_kills_the_agent_through_the_handle():
    registry, actor = _registry()
    stopped = await Session.stop_task(SimpleNamespace(runtime=SimpleNamespace(registry=registry)), "agent-1")
    assert stopped is True
    assert actor.calls == [("kill_agent", "agent-1", "killed", "stopped by the client")]


async def test_an_agents_progress_and_parking_reach_the_registry_by_the_supervisors_own_methods():
    registry, actor = _registry()
    registry.tell_progress("agent-1", turns=2, seq=7)
    registry.tell_parked("agent-1", True, 8)
    await registry.progress("agent-1", turns=3, seq=9)
    assert actor.calls == [("progress", "agent-1"), ("set_parked", "agent-1", True, 8), ("progress", "agent-1")]
