"""A conversation's ``initialize`` is answered by the run, not the thin client: once its session
is open (tests/sdk/test_sdk_initialize.py, with the session's output styles), or, when the session
cannot start, from the request itself before the failure, so the SDK reads the failure as the
run's result. Fast: the session fails before any Ray is needed."""

from __future__ import annotations

import asyncio
import json
import socket

from covey.client import ports as protocol
from covey.service.conversation import ConversationRun, _End
from covey.service.ports import StreamSink, StreamSource


async def _served(request: dict, *lines: dict) -> list[dict]:
    """What a ``ConversationRun`` for ``request`` sends its client, which sent ``lines`` (and stays)."""
    served, client = socket.socketpair()
    reader, writer = await asyncio.open_unix_connection(sock=served)
    client.sendall(b"".join(protocol.encode(line) for line in lines))
    await asyncio.wait_for(ConversationRun(request, StreamSource(reader), StreamSink(writer), service=False).serve(), 30)
    writer.close()
    await writer.wait_closed()
    client.settimeout(5)
    data = b""
    while chunk := client.recv(65536):
        data += chunk
    client.close()
    return [json.loads(line) for line in data.splitlines()]


async def test_a_session_that_cannot_start_has_its_initialize_answered_before_the_failure(tmp_path):
    request = protocol.control_request(protocol.RUN, "run_1", cwd=str(tmp_path), env={},
                                       options={"max_turns": "many"}, run={"conversation": True,
                                                                           "initialize_reads": ["settings"]})
    initialize = protocol.control_request("initialize", "init_1", agents={"helper": {"description": "helps"}})

    sent = await _served(request, initialize)

    kinds = [(line["type"], (line.get("response") or {}).get("request_id")) for line in sent]
    assert kinds == [("control_response", "init_1"), ("control_response", "run_1"), ("result", None),
                     (protocol.DONE, None)], sent
    answer = sent[0]["response"]["response"]
    assert answer["agents"] == [{"name": "helper", "description": "helps"}] and answer["settings_applied"] is True
    assert sent[1]["response"]["subtype"] == "error" and "max_turns" in sent[1]["response"]["error"]
    assert sent[2]["is_error"] is True


class _Session:
    """A session whose first ``mail_waiting`` call is out while the program's prompt and the end of
    its input arrive (the SDK writes a string prompt once initialize is answered, then closes stdin)."""

    def __init__(self, run: ConversationRun) -> None:
        self.run, self.calls = run, 0

    async def mail_waiting(self) -> bool:
        self.calls += 1
        if self.calls == 1:
            await self.run._take({"type": "user", "message": {"role": "user", "content": "say ok"}})
            await self.run._take({"type": protocol.END_INPUT})
        return False

    async def background_running(self) -> bool:
        return False


async def test_a_prompt_that_came_with_the_end_of_input_during_the_check_for_mail_is_still_run(tmp_path):
    served, client = socket.socketpair()
    reader, writer = await asyncio.open_unix_connection(sock=served)
    request = protocol.control_request(protocol.RUN, "run_1", cwd=str(tmp_path), env={}, options={},
                                       run={"conversation": True})
    run = ConversationRun(request, StreamSource(reader), StreamSink(writer), service=False)
    session = _Session(run)

    first = await run._next_turn(session)  # type: ignore[arg-type]
    after = await run._next_turn(session)  # type: ignore[arg-type]

    assert (first, after) == ("say ok", _End.CONVERSATION)
    writer.close()
    client.close()
