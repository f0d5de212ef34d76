"""``covey attach ID``, ``covey sessions`` and ``covey kill SESSION``: the thin client's side
of sessions that outlive their clients (docs/durability.md). Standard library only, like
``client``.

``attach`` prints a session's run from its first line, exactly as the ``covey -p`` that
started it would have (in that run's output format unless one is given); ``--after UUID``
starts after the event with that ``uuid`` (a stream-json reader that left off there). Ctrl-C
detaches (the session goes on); a second Ctrl-C within ``STOP_WINDOW_S`` stops it.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from typing import Any

from covey.daemon import lifecycle, protocol
from covey.daemon.lifecycle import ServiceUnavailable, ask
from covey.daemon.paths import service_paths
from covey.errors import CoveyError
from covey.service.client import ServedRun, _Leave

STOP_WINDOW_S = 2.0


class _Detach(Exception):
    """The first Ctrl-C of an attached client."""


class AttachedRun(ServedRun):
    """A ``covey attach`` reader: leaving stops nothing, unless asked twice."""

    stopping = False

    def attach(self, session_id: str) -> int:
        previous = {signum: signal.signal(signum, self._on_signal) for signum in (signal.SIGINT, signal.SIGTERM)}
        try:
            self._send(protocol.control_request(protocol.ATTACH, session_id=session_id))
            answer = self.conn.receive()
            response = (answer or {}).get("response") or {}
            if response.get("subtype") != "success":
                raise CoveyError(response.get("error") or "the covey service did not answer the attach")
            meta = response.get("response") or {}
            self.output_format = self.output_format or meta.get("output_format") or "text"
            return self._read(session_id)
        except _Leave as leave:
            return 128 + leave.signum
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _read(self, session_id: str) -> int:
        while True:
            try:
                return self._conversation()
            except _Detach:
                if self._stop_asked(session_id):
                    self.stopping = True
                    self._send_interrupt()
                    continue
                print(f"covey: detached from session {session_id}; it goes on (`covey attach {session_id}` "
                      f"follows it again, `covey kill {session_id}` stops it)", file=sys.stderr)
                return 0

    def _stop_asked(self, session_id: str) -> bool:
        """A second Ctrl-C within the window stops the session."""
        print(f"covey: detaching from session {session_id}; Ctrl-C again within {STOP_WINDOW_S:g} s stops it",
              file=sys.stderr, flush=True)
        self.signum = None
        deadline = time.monotonic() + STOP_WINDOW_S
        try:
            while time.monotonic() < deadline:
                time.sleep(0.05)
        except _Detach:
            return True
        return False

    def _on_signal(self, signum: int, _frame: Any) -> None:
        if self.stopping:
            raise _Leave(signum)
        raise _Detach()


def attach_command(session_id: str, output_format: str | None, after: str | None = None) -> int:
    paths = service_paths()
    lifecycle.ensure_service(paths)  # a service that died left the session running: a new one serves it
    conn = lifecycle.connect(paths, timeout_s=lifecycle.PING_TIMEOUT_S)
    if conn is None:
        raise ServiceUnavailable(f"the covey service stopped answering; its log: {paths.log}")
    conn.sock.settimeout(None)
    try:
        run = AttachedRun(conn, paths, output_format or "")
        run.skip_until = after
        return run.attach(session_id)
    finally:
        conn.close()


def sessions_command(as_json: bool = False) -> int:
    answer = ask(service_paths(), protocol.SESSIONS, timeout_s=30.0)
    if answer is None:
        from covey.service.journal import all_meta

        sessions = all_meta()  # no service: what the files say (a "running" one may be lost)
    else:
        sessions = answer.get("sessions") or []
    if as_json:
        print(json.dumps(sessions, indent=2))
        return 0
    if not sessions:
        print("covey: no session has been run through the covey service")
    for entry in sessions:
        print(session_line(entry))
    return 0


def session_line(entry: dict[str, Any]) -> str:
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.get("started_at") or 0))
    parts = [str(entry.get("session_id")), f"{entry.get('status', '?'):<11}", started, str(entry.get("cwd", ""))]
    if entry.get("status") == "running":
        parts.append(f"{entry.get('agents_running', '?')} agents running")
        if entry.get("questions"):
            parts.append(f"{entry['questions']} question(s) waiting for a client: `covey attach`")
    if "cost_usd" in entry:
        parts.append(f"${entry['cost_usd']:.4f}")
    if entry.get("detached"):
        parts.append("detached")
    return "  ".join(parts)


def kill_session(session_id: str) -> int | None:
    """``covey kill ID`` for a session this user's service runs; None if ``ID`` names no session."""
    from covey.service.journal import read_meta

    if read_meta(session_id) is None:
        return None
    answer = ask(service_paths(), protocol.KILL_SESSION, timeout_s=30.0, session_id=session_id)
    if answer is None:
        raise CoveyError(f"session {session_id} is not running (no covey service answers)")
    print(f"covey: stopping session {session_id}")
    return 0
