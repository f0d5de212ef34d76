"""Work that SIGINT or SIGTERM cancels rather than kills: the task is cancelled, so what it
started is stopped and cleaned up on the way out, and ``Interrupted`` says which signal came
(``covey -p`` in-process, ``covey map``: one line and exit 130 or 143)."""

from __future__ import annotations

import asyncio
import signal
from typing import Awaitable, TypeVar

from covey.errors import Interrupted

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM)


async def cancelled_by_signals(work: Awaitable[T]) -> T:
    """Await ``work``; SIGINT or SIGTERM cancels it and raises ``Interrupted``. Python's own
    handlers are put back after (asyncio would leave the defaults: SIGTERM would then kill outright)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        task.cancel()

    before = {signum: signal.getsignal(signum) for signum in SIGNALS}
    for signum in SIGNALS:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        return await task
    except asyncio.CancelledError:
        if received:
            raise Interrupted(received[0]) from None
        raise
    finally:
        for signum, handler in before.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler)
