"""A fresh process's first reply through the SDK, without a network: it builds the SDK's
validators and parsers (measured: ~1 s of CPU on 2 cores, paid between a new agent's first
and second request otherwise)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Callable

import anthropic

from covey.model.base import Model, ModelRequest

try:  # anthropic 2.x uses httpx2 (as covey.gateway.anthropic)
    import httpx2 as _httpx
except ImportError:
    import httpx as _httpx  # type: ignore[no-redef]  # the same API under its older name


def _canned_stream(request: Any) -> Any:
    """A streamed reply of one text block and one tool call, as the Messages API sends it."""
    usage = {"input_tokens": 1, "output_tokens": 1}
    message: dict[str, Any] = {"id": "msg_warm", "type": "message", "role": "assistant", "model": "warm-up", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": usage}
    tool = {"type": "tool_use", "id": "toolu_warm", "name": "Glob", "input": {}}
    events = [
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": tool}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "input_json_delta", "partial_json": '{"pattern": "*"}'}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                           "usage": usage}),
        ("message_stop", {"type": "message_stop"}),
    ]
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    return _httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


def warm_up_with(make: Callable[[anthropic.AsyncAnthropic], Model]) -> None:
    """Run one canned streamed exchange through the SDK and the adapter ``make`` builds on a
    client (``covey.gateway.anthropic.warm_up_offline``; passed in, so this module does not import it)."""
    async def exchange() -> None:
        client = anthropic.AsyncAnthropic(api_key="warm-up", base_url="http://warm-up.invalid",
                                          http_client=_httpx.AsyncClient(transport=_httpx.MockTransport(_canned_stream)))
        model = make(client)
        request = ModelRequest(model="warm-up", system=[{"type": "text", "text": "warm"}],
                               messages=[{"role": "user", "content": "warm"}], tools=[])
        await model.create(request)
        await client.close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(exchange())
        return
    thread = threading.Thread(target=asyncio.run, args=(exchange(),))  # not inside a running loop
    thread.start()
    thread.join()
