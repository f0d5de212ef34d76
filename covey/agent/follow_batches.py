"""A run's events as a reader in another process takes them: what is ready at once travels as
one list, one Ray streaming item instead of one per event (each item costs the actor and its
reader a round of Ray's bookkeeping; a sync child's turn makes several events at once, and its
parent, the service and the client each read them again). The run's ``FinalReport`` always
travels alone and last, so a reader that stops early has it or not: never half a batch with it.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

from covey.events import Event
from covey.runtime.records import FinalReport

FOLLOW_BATCH = 64
"""The most events in one item."""

Item = Event | FinalReport
_NOTHING = object()


async def batches(queue: asyncio.Queue[Item | None]) -> AsyncIterator[list[Item]]:
    """The queue's items in lists of what was ready together, until ``None``."""
    held: object = _NOTHING
    while True:
        item = held if held is not _NOTHING else await queue.get()
        held = _NOTHING
        if item is None:
            return
        batch: list[Item] = [item]  # type: ignore[list-item]
        while not isinstance(item, FinalReport) and not queue.empty() and len(batch) < FOLLOW_BATCH:
            following = queue.get_nowait()
            if following is None or isinstance(following, FinalReport):
                held = following
                break
            batch.append(following)
        yield batch
