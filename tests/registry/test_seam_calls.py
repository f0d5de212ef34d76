"""Calls across the registry seam as the callers make them, through the real ``RegistryHandle``
(its remote call stubbed): a caller and the handle disagreeing on arguments fails here."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from covey.registry.actor import RegistryHandle
from covey.session import Session
from covey.tools.base import ToolContext, ToolServices
from covey.tools.shells import TaskStop


class _Recording(RegistryHandle):
    def __init__(self) -> None:
        super().__init__(actor=None, name="registry")
        self.calls: list[tuple] = []

    async def call(self, method: str, *args):  # type: ignore[override]
        self.calls.append((method, *args))
        return True


async def test_task_stop_on_a_background_agent_kills_it_through_the_handle(tmp_path):
    registry = _Recording()
    ctx = ToolContext(agent_id="a", cwd=Path(tmp_path), services=ToolServices(runtime=SimpleNamespace(registry=registry)))
    tool = TaskStop()
    result = await tool.run(tool.input_model.model_validate({"task_id": "agent-0123456789abcdef"}), ctx)
    assert not result.is_error, result.content
    assert registry.calls == [("kill_agent", "agent-0123456789abcdef", "killed", "stopped by TaskStop")]


async def test_the_sdks_stop_task_kills_the_agent_through_the_handle():
    registry = _Recording()
    stopped = await Session.stop_task(SimpleNamespace(runtime=SimpleNamespace(registry=registry)), "agent-1")
    assert stopped is True
    assert registry.calls == [("kill_agent", "agent-1", "killed", "stopped by the client")]
