"""A streamed request (covey/loop/stream.py): events first, the message last; a failure or an early close."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from covey.errors import ModelAPIError
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.loop.stream import streamed
from covey.model.messages import Message
from covey.tools.base import ToolContext


def _message() -> Message:
    return Message(id="m1", model="m", content=[])


async def test_events_arrive_in_order_and_the_message_comes_last():
    async def request(on_stream):
        for index in range(3):
            on_stream({"n": index})
            await asyncio.sleep(0)
        return _message()

    items = [item async for item in streamed(request)]
    assert items[:3] == [{"n": 0}, {"n": 1}, {"n": 2}] and isinstance(items[3], Message)


async def test_a_failed_request_raises_after_the_events_it_streamed():
    async def request(on_stream):
        on_stream({"n": 0})
        await asyncio.sleep(0)
        raise ModelAPIError("overloaded", 529)

    seen = []
    with pytest.raises(ModelAPIError):
        async for item in streamed(request):
            seen.append(item)
    assert seen == [{"n": 0}]


async def test_closing_the_stream_early_cancels_the_request():
    cancelled = asyncio.Event()

    async def request(on_stream):
        on_stream({"n": 0})
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return _message()

    items = streamed(request)
    assert await items.__anext__() == {"n": 0}
    await items.aclose()
    await asyncio.wait_for(cancelled.wait(), 5)


class _FailingStream:
    async def create(self, request):
        request.on_stream({"type": "message_start"})
        await asyncio.sleep(0)
        raise ModelAPIError("overloaded", 529)


async def test_an_api_error_mid_stream_ends_the_run_with_its_status_after_the_partial_events():
    config = LoopConfig(model_id="m", system=[{"type": "text", "text": "s"}], partial_messages=True)
    loop = AgentLoop(model=_FailingStream(), config=config,
                     executor=ToolExecutor([], ToolContext(agent_id="a", cwd=Path("."))))
    events = [e async for e in loop.run([{"role": "user", "content": "go"}])]
    assert [e.type for e in events] == ["stream_event", "result"]
    assert events[-1].terminal_reason == "api_error" and events[-1].api_error_status == 529
