"""``covey attach ID``, ``covey sessions`` and ``covey kill SESSION``: the thin client's side
of sessions that outlive their clients (docs/durability.md). Standard library only, like
``served``.

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

from covey.cli.served import ClientRun, _Leave
from covey.client import process as lifecycle
from covey.client import ports as protocol
from covey.client.paths import service_paths
from covey.client.process import ServiceUnavailable, ask
from covey.errors import CoveyError

STOP_WINDOW_S = 2.0


class _Detach(Exception):
    """The first Ctrl-C of an attached client."""


class AttachedRun(ClientRun):
    """A ``covey attach`` reader: leaving stops nothing, unless asked twice. A permission prompt
    the run waits on is answered here at a terminal (text output), or over stdio
    (``--permission-prompt-tool stdio``); a reader that can do neither leaves it open."""

    stopping = False
    answer_stdio = False
    """``--permission-prompt-tool stdio``: a prompt is printed on stdout, its ``control_response`` read from stdin."""
    told: frozenset[str] = frozenset()
    """The prompts this reader said it leaves open."""

    def _asked(self, message: dict[str, Any]) -> None:
        if self.answer_stdio:
            self._answer_from_stdin(message)
        elif sys.stdin.isatty() and self.output_format == "text":
            super()._asked(message)
        else:
            self._leave_open(message)

    def _answer_from_stdin(self, message: dict[str, Any]) -> None:
        """Claude Code's stdio permission tool: the request on stdout, the answer on stdin."""
        print(json.dumps(message), flush=True)
        while line := sys.stdin.readline():
            try:
                answer = json.loads(line) if line.strip() else None
            except ValueError:
                print(f"covey: not a JSON line on stdin, ignored: {line.strip()[:80]}", file=sys.stderr)
                continue
            if isinstance(answer, dict) and answer.get("type") == "control_response":
                self._send(answer)
                if (answer.get("response") or {}).get("request_id") == message.get("request_id"):
                    return
        self._leave_open(message)  # stdin ended before it was answered

    def _leave_open(self, message: dict[str, Any]) -> None:
        request_id = str(message.get("request_id"))
        if request_id in self.told:
            return
        self.told = self.told | {request_id}
        words = (message.get("request") or {}).get("message") or "a permission prompt"
        print(f"covey: the session waits for an answer to {words!r}; it stays open for a client that can answer "
              f"(`covey attach ID` at a terminal, or with --permission-prompt-tool stdio)", file=sys.stderr, flush=True)

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


def attach_command(session_id: str, output_format: str | None, after: str | None = None,
                   permission_prompt_tool: str | None = None) -> int:
    if permission_prompt_tool not in (None, "stdio"):
        raise CoveyError(f"--permission-prompt-tool {permission_prompt_tool}: covey answers prompts over stdio only")
    if permission_prompt_tool and output_format not in (None, "stream-json"):
        raise CoveyError("--permission-prompt-tool stdio needs --output-format stream-json (as Claude Code does)")
    stdio = permission_prompt_tool == "stdio"
    session_id = resolve_session(session_id) or session_id  # one the service does not know: it says so
    output_format = "stream-json" if stdio else output_format
    paths = service_paths()
    lifecycle.ensure_service(paths)  # a service that died left the session running: a new one serves it
    conn = lifecycle.connect(paths, timeout_s=lifecycle.PING_TIMEOUT_S)
    if conn is None:
        raise ServiceUnavailable(f"the covey service stopped answering; its log: {paths.log}")
    conn.sock.settimeout(None)
    try:
        run = AttachedRun(conn, paths, output_format or "")
        run.skip_until, run.answer_stdio = after, stdio
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
    from covey.observe.live import STATUS_STYLES
    from covey.observe.tables import table_lines

    rows = [session_cells(entry) for entry in sessions]
    for line in table_lines(rows, ("bold", STATUS_STYLES), whole=3, indent=0):
        print(line)
    return 0


def session_cells(entry: dict[str, Any]) -> list[str]:
    """One session in ``covey sessions``: id, status, started, cwd, then what it does and spent, in one cell."""
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.get("started_at") or 0))
    parts: list[str] = []
    if entry.get("status") == "running":
        parts.append(f"{entry.get('agents_running', '?')} agents running")
        if entry.get("questions"):
            words = "; ".join(str(q.get("message") or q.get("tool_name")) for q in entry.get("waiting") or [])
            parts.append(f"{entry['questions']} question(s) waiting for a client{f' ({words})' if words else ''}: "
                         f"`covey attach {entry.get('session_id')}` answers")
    if "cost_usd" in entry:
        parts.append(f"${entry['cost_usd']:.4f}")
    if entry.get("detached"):
        parts.append("detached")
    return [str(entry.get("session_id")), str(entry.get("status", "?")), started, str(entry.get("cwd", "")),
            "  ".join(parts)]


def resolve_session(given: str) -> str | None:
    """The id of the session of this user's service that ``given`` names: the id, or a start of it
    no other session's id shares (``covey ps`` shows 8 characters); None if it names none."""
    from covey.service.journal import read_meta, sessions_dir

    if not given or read_meta(given) is not None:
        return given or None
    found = sorted(path.stem for path in sessions_dir().glob("*.json") if path.stem.startswith(given))
    if len(found) > 1:
        raise CoveyError(f"{given!r} is the start of several sessions' ids ({', '.join(found)}): give more of it")
    return found[0] if found else None


def kill_session(given: str) -> int | None:
    """``covey kill ID`` for a session this user's service runs (``ID`` or the start of it); None if
    it names no session."""
    if (session_id := resolve_session(given)) is None:
        return None
    answer = ask(service_paths(), protocol.KILL_SESSION, timeout_s=30.0, session_id=session_id)
    if answer is None:
        raise CoveyError(f"session {session_id} is not running (no covey service answers)")
    print(f"covey: stopping session {session_id}")
    return 0
