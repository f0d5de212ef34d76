"""A detached run from Python (``Session(detach=True)``), and ``covey.attach``: the covey
service's side of a run that no process of the program owns. Standard library only, like
the thin client.

``submit`` sends a ``covey_run`` with ``"detach": true`` and returns the session id the
service answers with; nobody owns the run, so the program may end. ``Attached`` follows a
session (running, or finished: its journal) and yields its events as ``covey attach
--output-format stream-json`` prints them, from the first or after an event's ``uuid``; a
permission prompt the run waits on goes to ``on_permission``, or is left open.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any, AsyncIterator, Callable, Iterator

from covey.client import process as lifecycle
from covey.client import ports as protocol
from covey.client.paths import service_paths
from covey.client.process import Connection, ServiceUnavailable
from covey.errors import CoveyError

OnPermission = Callable[[dict[str, Any]], "bool | dict[str, Any]"]
"""``fn(request) -> bool | response``: the ``can_use_tool`` request (``tool_name``, ``input``,
``message``, ...); True allows it as asked, False denies it, a dict is the answer itself."""


def _connect(address: str | None = None) -> Connection:
    paths = service_paths()
    lifecycle.ensure_service(paths, address=address)
    conn = lifecycle.connect(paths, timeout_s=lifecycle.PING_TIMEOUT_S)
    if conn is None:
        raise ServiceUnavailable(f"the covey service stopped answering; its log: {paths.log}")
    conn.sock.settimeout(None)
    return conn


def submit(prompt: str, options: dict[str, Any], *, cwd: str, env: dict[str, str]) -> str:
    """Start ``prompt`` as a detached run on the covey service (started if none answers);
    its session id once the service has opened the session. ``options``: ``SessionOptions``
    fields as JSON; a session that cannot start raises ``CoveyError`` with the service's words."""
    conn = _connect(options.get("address"))
    try:
        request = protocol.run_request(prompt, {**options, "cwd": cwd}, env=env, output_format="stream-json",
                                       verbose=False, live=False, trace=None, can_ask=False, detach=True)
        conn.send(request)
        with contextlib.suppress(OSError):  # a service that refused the run may have closed: its words are read below
            conn.send(protocol.user_message(prompt))
        while (message := conn.receive()) is not None:
            response = (message.get("response") or {}) if message.get("type") == "control_response" else {}
            if response.get("subtype") == "error":
                raise CoveyError(str(response.get("error")))
            if isinstance(session_id := (response.get("response") or {}).get("session_id"), str):
                return session_id
        raise ServiceUnavailable("the covey service closed the connection before the run's session started")
    finally:
        conn.close()


def kill(session_id: str) -> None:
    """Stop a running session (``covey kill ID``): its agents stop with their cleanup."""
    answer = lifecycle.ask(service_paths(), protocol.KILL_SESSION, timeout_s=30.0, session_id=session_id)
    if answer is None:
        raise CoveyError(f"session {session_id} is not running (no covey service answers)")


class Attached:
    """A session's events, followed to its end: ``for event in covey.attach(id)`` or
    ``async for``. ``record`` is the session's record (cwd, status, started, ...); leaving
    (``close``, or ending the loop) stops nothing."""

    def __init__(self, session_id: str, *, after: str | None = None, on_permission: OnPermission | None = None) -> None:
        self.session_id, self.after, self.on_permission = session_id, after, on_permission
        self.record: dict[str, Any] = {}
        self.stderr: list[str] = []
        """covey's lines for a terminal's stderr (warnings, a kept worktree)."""
        self.waiting: dict[str, dict[str, Any]] = {}
        """Permission prompts the run waits on that this reader left open, by request id."""
        self._conn: Connection | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        conn = self._conn = _connect()
        try:
            conn.send(protocol.control_request(protocol.ATTACH, session_id=self.session_id))
            response = (conn.receive() or {}).get("response") or {}
            if response.get("subtype") != "success":
                raise CoveyError(response.get("error") or "the covey service did not answer the attach")
            self.record = response.get("response") or {}
            yield from self._events(conn)
        finally:
            self.close()

    def _events(self, conn: Connection) -> Iterator[dict[str, Any]]:
        skipping = self.after
        while (message := conn.receive()) is not None:
            kind = message.get("type")
            if kind == protocol.DONE:
                if message.get("error"):
                    raise CoveyError(message["error"])
                return
            if kind == "control_request" and protocol.subtype_of(message) == protocol.CAN_USE_TOOL:
                self._asked(conn, message)
            elif kind == protocol.STDERR:
                self.stderr.append(message.get("text", ""))
            elif kind in (protocol.LIVE, "control_response"):
                continue
            elif skipping is not None:  # a reader that has these events already
                skipping = None if message.get("uuid") == skipping else skipping
            else:
                yield message
        if self._conn is not None:  # not closed by this reader: the service went
            raise ServiceUnavailable(f"the covey service stopped while session {self.session_id} was followed; "
                                     "it goes on: attach again")

    def _asked(self, conn: Connection, message: dict[str, Any]) -> None:
        request = message.get("request") or {}
        if self.on_permission is None:
            self.waiting[message["request_id"]] = request
            return
        answer = self.on_permission(request)
        if not isinstance(answer, dict):
            answer = {"behavior": "allow", "updatedInput": request.get("input", {})} if answer else {
                "behavior": "deny", "message": ""}
        conn.send(protocol.success(message["request_id"], answer))

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        """The same events; each read in a worker thread, so the event loop goes on meanwhile."""
        events = iter(self)
        done = object()
        try:
            while (event := await asyncio.to_thread(next, events, done)) is not done:
                yield event  # type: ignore[misc]
        finally:
            self.close()

    def close(self) -> None:
        """Stop following (the session goes on)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(OSError):  # wakes a read blocked in another thread (``async for``)
                conn.sock.shutdown(socket.SHUT_RDWR)
            conn.close()

    def __enter__(self) -> "Attached":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def attach(session_id: str, *, after: str | None = None, on_permission: OnPermission | None = None) -> Attached:
    """Follow a session the covey service runs or ran (``covey attach ID``): its events, as
    ``--output-format stream-json`` prints them, from the first, or after the event whose
    ``uuid`` is ``after``. ``on_permission`` answers the permission prompts it waits on
    (without it they stay open for another client)."""
    return Attached(session_id, after=after, on_permission=on_permission)
