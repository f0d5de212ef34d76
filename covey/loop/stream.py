"""A streamed request: its raw stream events as they arrive, then its message."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable

from covey.model.messages import Message

OnStream = Callable[[dict[str, Any]], None]


async def streamed(request: Callable[[OnStream], Awaitable[Message]]) -> AsyncIterator[dict[str, Any] | Message]:
    """Run ``request(on_stream)``; yield each raw event it hands ``on_stream``, then its message.
    Closing the iterator early cancels the request."""
    arrived: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    reply = asyncio.ensure_future(request(arrived.put_nowait))
    try:
        while not reply.done() or not arrived.empty():
            if arrived.empty():
                waiting = asyncio.ensure_future(arrived.get())
                await asyncio.wait({reply, waiting}, return_when=asyncio.FIRST_COMPLETED)
                if not waiting.done():
                    waiting.cancel()
                    continue
                yield waiting.result()
            else:
                yield arrived.get_nowait()
        yield reply.result()
    finally:
        if not reply.done():
            reply.cancel()
