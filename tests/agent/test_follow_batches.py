"""A run's events travel to a reader in another process in lists of what was ready together;
the FinalReport always alone and last (covey/agent/follow_batches.py)."""

from __future__ import annotations

import asyncio

from covey.agent.follow_batches import FOLLOW_BATCH, batches
from covey.events.base import StreamEvent
from covey.runtime.records import FinalReport


def text(i: int) -> StreamEvent:
    return StreamEvent(agent_id="a", event={"text": f"t{i}"})


async def collect(items: list) -> list[list]:
    queue: asyncio.Queue = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)
    return [batch async for batch in batches(queue)]


def test_what_is_ready_together_is_one_list_and_the_report_travels_alone():
    report = FinalReport(status="completed", text="done")
    got = asyncio.run(collect([text(1), text(2), text(3), report, None]))
    assert [[i.event["text"] if isinstance(i, StreamEvent) else i.text for i in batch] for batch in got] == [
        ["t1", "t2", "t3"], ["done"]]
    assert got[-1] == [report]


def test_a_batch_is_bounded_and_the_end_stops_it():
    got = asyncio.run(collect([text(i) for i in range(FOLLOW_BATCH + 5)] + [None, text(999)]))
    assert [len(batch) for batch in got] == [FOLLOW_BATCH, 5]  # nothing after the end


def test_items_that_come_one_by_one_travel_one_by_one():
    async def scenario() -> list[list]:
        queue: asyncio.Queue = asyncio.Queue()
        got: list[list] = []

        async def read() -> None:
            async for batch in batches(queue):
                got.append(batch)

        reader = asyncio.create_task(read())
        for i in range(3):
            queue.put_nowait(text(i))
            await asyncio.sleep(0.01)  # the reader takes each before the next comes
        queue.put_nowait(None)
        await reader
        return got

    assert [len(batch) for batch in asyncio.run(scenario())] == [1, 1, 1]
