"""OpenTelemetry spans of a fan-out on Ray: every agent runs in an actor of its own and exports
through the standard OTLP variables to a collector on loopback (this test's), and the span tree
it receives is one trace with each child's ``invoke_agent`` under its parent's Agent call."""

from __future__ import annotations

import asyncio
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse

from covey.session import Session
from tests.session.scripts import CHILD, MAIN, agent_call, rule, scripted

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_session")]


class _Collector(ThreadingHTTPServer):
    request_queue_size = 256  # every agent's actor posts its spans at its end
    spans: list[dict[str, Any]]


class _Receive(BaseHTTPRequestHandler):
    server: _Collector

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
            for scope in resource.scope_spans:
                self.server.spans += [_plain(span) for span in scope.spans]
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


def _plain(span: Any) -> dict[str, Any]:
    attributes = {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in span.attributes
                  if a.value.WhichOneof("value") in ("string_value", "int_value", "bool_value", "double_value")}
    return {"name": span.name, "trace": span.trace_id.hex(), "id": span.span_id.hex(),
            "parent": span.parent_span_id.hex() or None, **attributes}


@pytest.fixture
def collector(monkeypatch):
    server = _Collector(("127.0.0.1", 0), _Receive)
    server.spans = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    yield server
    server.shutdown()
    server.server_close()


def _fan_out():
    """The main agent launches A and B together; A launches a grandchild."""
    return scripted(
        rule({**CHILD, "messages_contain": "TASK-A", "last_tool_result_contains": "grand done"}, {"text": "a done"}),
        rule({**CHILD, "messages_contain": "TASK-A"}, {"tool_use": agent_call("GRAND-TASK", background=False)}),
        rule({**CHILD, "messages_contain": "GRAND-TASK"}, {"text": "grand done"}),
        rule({**CHILD, "messages_contain": "TASK-B"}, {"text": "b done"}),
        rule({**MAIN, "last_message_contains": "b done"}, {"text": "all done"}),
        rule(MAIN, {"tool_use": [agent_call("TASK-A", background=False, description="a"),
                                 agent_call("TASK-B", background=False, description="b")]}),
    )


async def test_a_fan_out_on_ray_is_one_trace_with_each_child_under_its_agent_call(tmp_path, collector):
    (tmp_path / "p").mkdir()
    session = Session(cwd=str(tmp_path / "p"), model=_fan_out(), pool_size=4, max_turns=8,
                      transcript_dir=str(tmp_path / "t"))
    try:
        result = await asyncio.wait_for(session.run("go"), 120)
    finally:
        session.close()
    assert "all done" in str(result)
    deadline = time.monotonic() + 20
    while sum(s["gen_ai.operation.name"] == "invoke_agent" for s in collector.spans) < 4 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    spans = {s["id"]: s for s in collector.spans}
    assert len({s["trace"] for s in spans.values()}) == 1  # one trace for the whole run
    agents = [s for s in spans.values() if s["gen_ai.operation.name"] == "invoke_agent"]
    (main,) = [s for s in agents if s["parent"] is None]
    assert len(agents) == 4 and len({s["gen_ai.agent.id"] for s in agents}) == 4
    for agent in agents:
        assert any(s["parent"] == agent["id"] and s["gen_ai.operation.name"] == "chat" for s in spans.values())
        if agent is main:
            continue
        call = spans[agent["parent"]]  # each child's run hangs under the Agent call that launched it
        assert call["name"] == "execute_tool Agent" and call["gen_ai.tool.name"] == "Agent"
        assert spans[call["parent"]]["gen_ai.operation.name"] == "invoke_agent"
    depth = {s["id"]: s["covey.agent.depth"] for s in agents}
    assert sorted(depth.values()) == [0, 1, 1, 2]
    grand = next(s for s in agents if s["covey.agent.depth"] == 2)
    assert depth[spans[spans[grand["parent"]]["parent"]]["id"]] == 1  # under a child's call, not the main agent's
