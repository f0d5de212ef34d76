"""Fakes of the covey service for tests without Ray.

``FakeService`` is a thread in the test process speaking the protocol on a socket in
a private service directory; each ``covey_run`` is handed to the test's ``script``.
Run as a program (``python -m tests.service.fake_service``), it is a stand-in service
process for the start-up logic: it takes ``service.lock`` as the real one does, answers
pings with its pid, and leaves on ``covey_stop``.
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from covey.client import ports as protocol


class Peer:
    """The service's end of one client connection."""

    def __init__(self, rfile: Any, wfile: Any) -> None:
        self.rfile, self.wfile = rfile, wfile

    def send(self, message: dict[str, Any]) -> None:
        self.wfile.write(protocol.encode(message))
        self.wfile.flush()

    def receive(self) -> dict[str, Any] | None:
        line = self.rfile.readline()
        return protocol.decode(line) if line else None


Script = Callable[[Peer, dict[str, Any], dict[str, Any] | None], None]
"""``script(peer, run_request, user_message)``: what the service does with a run (or, with no
user message, a ``covey_attach`` request)."""


class FakeService:
    def __init__(self, root: Path, script: Script, identity: dict[str, Any] | None = None) -> None:
        self.root, self.script = root, script
        self.identity = identity or {}
        """More of the ping's answer: ``ray_address``, ``address``; ``status``: the answer to ``covey status``."""
        self.runs: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.started = threading.Event()
        """Set once a run's request and prompt came in."""
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        fake = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                peer = Peer(self.rfile, self.wfile)
                first = peer.receive()
                if first is None:
                    return
                match protocol.subtype_of(first):
                    case protocol.PING:
                        peer.send(protocol.success(first["request_id"], {"pid": os.getpid(), "version": "fake",
                                                                        **fake.identity}))
                    case protocol.RUN:
                        prompt = peer.receive()
                        fake.runs.append((first, prompt))
                        fake.started.set()
                        fake.script(peer, first, prompt)
                    case protocol.STATUS if fake.identity.get("status"):  # ``covey status``: what the test gave
                        peer.send(protocol.success(first["request_id"], fake.identity["status"]))
                    case protocol.ATTACH:  # ``covey attach``: the script answers it (its prompt is None)
                        fake.runs.append((first, {}))
                        fake.script(peer, first, None)

        self.server = socketserver.ThreadingUnixStreamServer(str(root / "service.sock"), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> "FakeService":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def result(text: str = "hello", *, is_error: bool = False, subtype: str = "success") -> dict[str, Any]:
    return {"type": "result", "session_id": "s-1", "subtype": subtype, "is_error": is_error, "result": text,
            "num_turns": 1, "duration_ms": 5, "duration_api_ms": 1, "total_cost_usd": 0.0, "usage": {}}


INIT = {"type": "system", "subtype": "init", "session_id": "s-1", "cwd": "/x", "model": "m", "tools": ["Read"],
        "permissionMode": "default", "agents": []}


def _serve_as_process() -> None:
    """A stand-in service process: the real lock, a ping that names this pid, ``covey_stop``."""
    from covey.client.paths import service_paths
    from covey.service.__main__ import _take_lock

    paths = service_paths()
    if _take_lock(paths) is None:
        print("another one runs", flush=True)
        return
    paths.socket.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(paths.socket))
    listener.listen(16)
    paths.info.write_text(json.dumps({"pid": os.getpid()}))
    while True:
        conn, _ = listener.accept()
        with conn, conn.makefile("rb") as lines:
            message = protocol.decode(lines.readline() or b"{}")
            conn.sendall(protocol.encode(protocol.success(message.get("request_id", ""), {"pid": os.getpid()})))
            if protocol.subtype_of(message) == protocol.STOP:
                paths.socket.unlink(missing_ok=True)
                sys.exit(0)


if __name__ == "__main__":
    _serve_as_process()
