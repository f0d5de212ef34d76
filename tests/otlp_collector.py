"""A fake OpenTelemetry collector on loopback: it takes OTLP/HTTP trace exports (``/v1/traces``,
protobuf) and keeps each span as a plain dict, for the tests that check the spans covey's actors send."""

from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse

SCALARS = ("string_value", "int_value", "bool_value", "double_value")


class Collector(ThreadingHTTPServer):
    request_queue_size = 256  # every agent's actor posts its spans at its end (RAY-NOTES: 5 drops connections)
    spans: list[dict[str, Any]]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_port}"

    def variables(self) -> dict[str, str]:
        """The standard variables that send a run's spans here."""
        return {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}


class _Receive(BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
            for scope in resource.scope_spans:
                self.server.spans += [plain(span) for span in scope.spans]
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


def plain(span: Any) -> dict[str, Any]:
    """A span as ``{name, trace, id, parent, start_ns, end_ns, <attribute>: value...}`` (scalar attributes only)."""
    attributes = {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in span.attributes
                  if a.value.WhichOneof("value") in SCALARS}
    return {"name": span.name, "trace": span.trace_id.hex(), "id": span.span_id.hex(),
            "parent": span.parent_span_id.hex() or None, "start_ns": span.start_time_unix_nano,
            "end_ns": span.end_time_unix_nano, **attributes}


@contextlib.contextmanager
def collector() -> Iterator[Collector]:
    server = Collector(("127.0.0.1", 0), _Receive)
    server.spans = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def check_tree(spans: list[dict[str, Any]], agents: int) -> dict[str, dict[str, Any]]:
    """Assert the spans are one trace of ``agents`` invoke_agent spans, each with a chat span under
    it and each child's under its parent's Agent call; the invoke_agent spans by agent id."""
    by_id = {s["id"]: s for s in spans}
    assert len({s["trace"] for s in spans}) == 1, "one trace for the whole run"
    runs = [s for s in spans if s["gen_ai.operation.name"] == "invoke_agent"]
    roots = [s for s in runs if s["parent"] is None]
    assert len(runs) == agents and len({s["gen_ai.agent.id"] for s in runs}) == agents, runs
    assert len(roots) == 1 and roots[0]["covey.agent.depth"] == 0
    for run in runs:
        assert any(s["parent"] == run["id"] and s["gen_ai.operation.name"] == "chat" for s in spans), run
        if run is roots[0]:
            continue
        call = by_id[run["parent"]]  # each child's run hangs under the Agent call that launched it
        assert call["name"] == "execute_tool Agent" and call["gen_ai.tool.name"] == "Agent", call
        assert by_id[call["parent"]]["gen_ai.operation.name"] == "invoke_agent"
        assert by_id[call["parent"]]["gen_ai.agent.id"] == run["covey.agent.parent_id"]
    return {s["gen_ai.agent.id"]: s for s in runs}
