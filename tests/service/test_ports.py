"""The wire between client, service and session host (``covey.service.ports``): each line the
client sends is read once, at the socket, into a value that goes on as it is; a line that
cannot be read gets one clear line back, never a traceback, and the service reads on."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from covey.client import ports as protocol
from covey.client.paths import ServicePaths
from covey.service.conversation import ConversationRun
from covey.service.host import _HostActor
from covey.service.journal import RunLog
from covey.service.ports import StreamSource, Unreadable, read_control, read_line, read_run
from covey.service.relay import _Relay
from covey.service.runs import ServedRun
from covey.service.server import Service

RUN = protocol.run_request("", {"cwd": "/p"}, env={"A": "b"}, output_format="stream-json", conversation=True)


@pytest.mark.parametrize("line", [
    protocol.user_message("two\nlines and ünïcode"),
    {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}, "uuid": "u1",
     "priority": "now"},
    protocol.control_request(protocol.INTERRUPT),
    protocol.success("r1", {"behavior": "allow"}),
    protocol.error("r1", "no", "unsupported_request"),
    {"type": protocol.END_INPUT},
])
def test_a_line_a_run_s_client_sends_comes_back_whole_as_one_value(line):
    assert read_line(protocol.encode(line)) == line


def test_the_run_request_comes_back_whole_and_checked():
    assert RUN["request"]["cwd"] == "/p" and RUN["request"]["run"] == {"output_format": "stream-json",
                                                                       "conversation": True}
    assert read_run(read_control(protocol.decode(protocol.encode(RUN)))) == RUN


def test_the_service_s_own_lines_come_back_whole():
    for line in (protocol.stderr_line("covey: a warning"), protocol.done(), protocol.done("boom"),
                 protocol.done(interrupted=True), {"type": protocol.LIVE, "tree": {"agent_id": "a"}}):
        assert protocol.decode(protocol.encode(line)) == line
    assert protocol.done("boom") == {"type": protocol.DONE, "error": "boom"}


@pytest.mark.parametrize("raw, why", [
    (b"not json\n", "not JSON"),
    (b"[1, 2]\n", "not a JSON object"),
    (b'{"type": "assistant"}\n', "a client does not send a line of type 'assistant'"),
    (b'{"type": "user", "message": {"role": "user"}}\n', "a user line needs message.content"),
    (b'{"type": "user", "message": "hi"}\n', "a user line needs message.content"),
    (b'{"type": "control_request", "request_id": "r", "request": {}}\n', "a control_request needs request.subtype"),
    (b'{"type": "control_response", "response": {"subtype": "success"}}\n', "response.request_id"),
])
def test_a_line_that_is_not_one_a_client_sends_is_unreadable_and_says_why(raw, why):
    line = read_line(raw)
    assert isinstance(line, Unreadable) and why in line.why


@pytest.mark.parametrize("body, why", [
    ({"env": {}, "options": {}}, "covey_run needs cwd, a string"),
    ({"cwd": "/p", "env": {"A": 1}, "options": {}}, "env holds strings only"),
    ({"cwd": "/p", "env": {}, "options": []}, "covey_run needs options, an object"),
    ({"cwd": "/p", "env": {}, "options": {}, "run": "fast"}, "run flags must be an object"),
])
def test_a_run_request_missing_what_the_run_reads_is_refused_naming_it(body, why):
    with pytest.raises(protocol.ProtocolError, match=why):
        read_run(read_control({"type": "control_request", "request_id": "r",
                                     "request": {"subtype": protocol.RUN, **body}}))


class _Sink:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def closed(self) -> bool:
        return False

    async def put(self, line: dict[str, Any]) -> None:
        self.lines.append(dict(line))


def _reader(*lines: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    for line in lines:
        reader.feed_data(line)
    reader.feed_eof()
    return reader


@pytest.mark.parametrize("kind", [ServedRun, ConversationRun])
async def test_a_bad_line_during_a_run_gets_one_stderr_line_and_the_run_reads_on(kind):
    interrupt = protocol.control_request(protocol.INTERRUPT, "int_1")
    sink = _Sink()
    run = kind(RUN, StreamSource(_reader(b"{oops\n", protocol.encode(interrupt))), sink)
    await asyncio.wait_for(run._listen(), 10)
    assert sink.lines[0]["type"] == protocol.STDERR and len([line for line in sink.lines
                                                              if line["type"] == protocol.STDERR]) == 1
    assert sink.lines[0]["text"].startswith("covey: a line the service could not read was ignored: not JSON")
    assert sink.lines[1] == protocol.success("int_1")  # read on: the interrupt after it was answered
    assert "Traceback" not in json.dumps(sink.lines)


class _Host:
    """A ``HostPort`` that keeps what it is handed."""

    name = "covey:host:test"

    def __init__(self) -> None:
        self.taken: list[Any] = []

    async def take(self, run_id: str, line: Any) -> None:
        self.taken.append((run_id, line))


async def test_the_relay_hands_the_host_each_line_as_a_value_and_an_unreadable_one_as_such():
    prompt = protocol.user_message("go")
    relay = _Relay(_Host(), "run_1", _reader(protocol.encode(prompt), b"garbage\n"), None, None)  # type: ignore[arg-type]
    relay.owner = True
    assert await relay._inbound() == "owner left"
    taken = relay.host.taken  # type: ignore[attr-defined]
    assert taken[0] == ("run_1", prompt)
    assert taken[1][0] == "run_1" and isinstance(taken[1][1], Unreadable) and "not JSON" in taken[1][1].why
    assert taken[2] == ("run_1", None)  # the owner left


async def test_the_host_queues_the_value_it_is_handed_and_notes_an_answer(tmp_path: Path):
    host = _HostActor()
    host.run_id, host.journal = "run_1", RunLog({}, tmp_path)
    answer = protocol.success("ask_1", {"behavior": "allow"})
    await host.take("run_1", answer)
    await host.take("run_0", protocol.user_message("an earlier run's"))  # dropped
    assert await host.source.next_line() is answer and host.source.queue.empty()
    assert host.journal.answered == {"ask_1"}


async def test_a_prompt_is_json_once_between_the_client_s_socket_and_the_run(monkeypatch, tmp_path: Path):
    """Read once at the socket; the host and the run get the value (before: decoded, re-encoded and
    decoded again)."""
    calls: list[str] = []
    loads, dumps = json.loads, json.dumps
    monkeypatch.setattr(json, "loads", lambda *a, **k: calls.append("loads") or loads(*a, **k))
    monkeypatch.setattr(json, "dumps", lambda *a, **k: calls.append("dumps") or dumps(*a, **k))
    host = _HostActor()
    host.run_id, host.journal = "run_1", RunLog({}, tmp_path)

    class _ToHost(_Host):
        async def take(self, run_id: str, line: Any) -> None:
            await host.take(run_id, line)

    raw = protocol.encode(protocol.user_message("go"))
    calls.clear()
    await _Relay(_ToHost(), "run_1", _reader(raw), None, None)._inbound()  # type: ignore[arg-type]
    first = await host.source.next_line()
    assert first == protocol.user_message("go") and calls == ["loads"]


async def test_a_bad_first_line_on_the_service_s_socket_gets_one_error_line(tmp_path: Path):
    paths = ServicePaths(tmp_path)
    service = Service(paths, address=None, idle_timeout_s=60)
    for raw, why in ((b"not json\n", "refused: not JSON"),
                     (b'{"type": "user", "message": {"content": "hi"}}\n', "refused: a control_request needs"),
                     (protocol.encode(protocol.control_request(protocol.RUN, env={}, options={})),
                      "refused: covey_run needs cwd, a string")):
        served, client = socket.socketpair()
        reader, writer = await asyncio.open_unix_connection(sock=served)
        client.sendall(raw)
        await asyncio.wait_for(service._client(reader, writer), 10)
        client.settimeout(5)
        data = b""
        while chunk := client.recv(65536):
            data += chunk
        client.close()
        lines = data.splitlines()
        assert len(lines) == 1, lines
        answer = json.loads(lines[0])["response"]
        assert answer["subtype"] == "error" and answer["error"].startswith(why), answer
        assert "Traceback" not in answer["error"]


def test_the_ports_module_imports_no_ray_and_no_pydantic():
    import subprocess
    import sys

    code = "import sys, covey.service.ports, covey.service.journal; print(sorted(m for m in ('ray', 'pydantic') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


class _ClientConn:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(protocol.encode(message))

    def send_line(self, data: bytes, kind: str = "user") -> None:
        self.sent.append(data)


def test_the_sdk_client_sends_each_line_as_the_sdk_wrote_it_and_a_bad_one_ends_the_input(capsys):
    import io

    from covey.cli.sdk import _relay_input

    line = '{"type": "user", "message": {"role": "user", "content": "ünïcode"}}'
    conn = _ClientConn()
    _relay_input(io.StringIO(f"{line}\n\n"), conn)  # type: ignore[arg-type]
    assert conn.sent == [f"{line}\n".encode(), protocol.encode({"type": protocol.END_INPUT})]
    conn = _ClientConn()
    _relay_input(io.StringIO(f"oops\n{line}\n"), conn)  # type: ignore[arg-type]
    assert conn.sent == [protocol.encode({"type": protocol.END_INPUT})]
    assert capsys.readouterr().err.startswith("covey: not JSON")
