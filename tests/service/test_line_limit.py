"""A line over the protocol's limit: the client says so clearly before sending; the service
refuses such a line and goes on serving."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from covey.cli import served as client
from covey.client import process as lifecycle
from covey.client import ports as protocol
from covey.service.ports import StreamSource, read_control, read_run
from covey.service.runs import ServedRun
from tests.service.conftest import client_env


def test_a_prompt_over_the_limit_is_refused_with_its_size(monkeypatch):
    monkeypatch.setattr(protocol, "LINE_LIMIT", 1000)
    client.check_prompt("x" * 900)  # fits
    with pytest.raises(client.PromptTooLarge) as refused:
        client.check_prompt("é" * 600)
    assert str(refused.value).startswith("the prompt is 1,200 bytes (") and "the limit is 1,000 bytes" in str(refused.value)


def test_a_connection_never_sends_a_line_over_the_limit(monkeypatch):
    monkeypatch.setattr(protocol, "LINE_LIMIT", 100)
    sent = []
    conn = lifecycle.Connection.__new__(lifecycle.Connection)
    conn.sock = type("Sock", (), {"sendall": lambda self, data: sent.append(data)})()
    with pytest.raises(lifecycle.LineTooLong, match="a covey_run line of .* bytes is over"):
        conn.send(protocol.control_request(protocol.RUN, env={"X": "y" * 200}))
    assert sent == []


def test_a_served_run_with_a_65_mib_prompt_exits_1_with_the_error_and_no_traceback(service_root, tmp_path):
    prompt = b"p" * (protocol.LINE_LIMIT + 1)
    done = subprocess.run([sys.executable, "-m", "covey", "run", "--model", "scripted:r.yaml"], input=prompt,
                          cwd=tmp_path, env=client_env(service_root), capture_output=True, timeout=120)
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert f"the prompt is {protocol.LINE_LIMIT + 1:,} bytes" in stderr and "Traceback" not in stderr
    assert not (service_root / "service.sock").exists()  # refused before a service was started


class _Sink:
    def __init__(self) -> None:
        self.lines: list[dict] = []

    def closed(self) -> bool:
        return False

    async def put(self, line: dict) -> None:
        self.lines.append(line)


async def test_the_service_fails_a_run_whose_prompt_line_is_too_long_and_reads_on():
    reader = asyncio.StreamReader(limit=1000)
    reader.feed_data(b'{"type": "user", "message": {"content": "' + b"x" * 5000 + b'"}}\n')
    reader.feed_eof()
    writer = _Sink()
    request = read_run(read_control(protocol.control_request(protocol.RUN, cwd="/", env={}, options={})))
    await asyncio.wait_for(ServedRun(request, StreamSource(reader), writer).serve(), 10)
    done = writer.lines[-1]
    assert done["type"] == protocol.DONE
    assert f"{protocol.LINE_LIMIT:,} bytes a line" in done["error"]
    assert any(line.get("type") == "result" and line["is_error"] for line in writer.lines)


def test_the_client_sends_the_prompt_line_it_checked_encoding_the_prompt_once(tmp_path):
    line = client.check_prompt("go")
    assert protocol.decode(line) == protocol.user_message("go")
    sent: list[bytes] = []
    replies = [{"type": "result", "result": "ok", "is_error": False}, {"type": protocol.DONE}]

    class _Conn:
        def send(self, message: dict) -> None:
            sent.append(protocol.encode(message))

        def send_line(self, data: bytes, kind: str = "user") -> None:
            sent.append(data)

        def receive(self) -> dict | None:
            return replies.pop(0) if replies else None

    from covey.client.paths import ServicePaths

    run = client.ClientRun(_Conn(), ServicePaths(tmp_path), "text")  # type: ignore[arg-type]
    assert run.run(protocol.run_request("", {}, env={}), line) == 0
    assert sent[1] is line and len(sent) == 2
