"""What crosses between the service, its session hosts and the runs they drive.

A client's line is read once, at the service's socket (``read_line``, ``read_control``,
``read_run``), into a value of ``covey.client.ports``'s types; the host is handed that value
(``HostPort``), and a run reads values from its ``LineSource`` and puts its lines, as values,
into its ``LineSink``. So a prompt is JSON only on the client's socket. Standard library only:
``journal`` (read by the thin client) conforms to ``LineSink`` here.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, AsyncIterator, Mapping, Protocol, TypedDict, cast

from covey.client import ports as protocol
from covey.client.ports import ControlResponse, ProtocolError, RunFlags, RunLine, RunRequest, UserLine


@dataclass(frozen=True)
class Unreadable:
    """A client's line that could not be read (too long, not JSON, not a line a client sends):
    the run tells its client why, and reads on."""

    why: str


class RunMeta(TypedDict, total=False):
    """A hosted run's record, as the service starts it (``Journal.meta`` adds its session, status, end)."""
    host: str
    run_id: str
    persist: bool
    cwd: str
    client_pid: int | None
    output_format: str
    detached: bool
    conversation: bool
    started_at: float


def read_line(raw: bytes | str) -> RunLine | Unreadable:
    """A line a run's client sent, checked for the fields the run reads; never raises."""
    try:
        return _checked(protocol.decode(raw))
    except ProtocolError as exc:
        return Unreadable(str(exc))


def _checked(line: dict[str, Any]) -> RunLine:
    match line.get("type"):
        case "user":
            content = line.get("message", {}).get("content") if isinstance(line.get("message"), dict) else None
            if not isinstance(content, (str, list)):
                raise ProtocolError("a user line needs message.content, a string or a list of blocks")
            return cast(UserLine, line)
        case "control_request":
            return read_control(line)
        case "control_response":
            response = line.get("response")
            if not (isinstance(response, dict) and response.get("subtype") in ("success", "error")
                    and isinstance(response.get("request_id"), str)):
                raise ProtocolError("a control_response needs response.subtype (success or error) "
                                    "and response.request_id")
            return cast(ControlResponse, line)
        case protocol.END_INPUT:
            return {"type": "covey_end_input"}
        case other:
            raise ProtocolError(f"a client does not send a line of type {other!r}")


def read_control(line: dict[str, Any]) -> protocol.ControlRequest:
    """``line`` as a control request; ``ProtocolError`` saying what it lacks."""
    request = line.get("request")
    if line.get("type") != "control_request" or not isinstance(request, dict) or not isinstance(
            request.get("subtype"), str):
        raise ProtocolError("a control_request needs request.subtype")
    return {"type": "control_request", "request_id": str(line.get("request_id") or ""), "request": request}


def read_run(line: protocol.ControlRequest) -> RunRequest:
    """A ``covey_run`` request, its fields checked (the options are ``session_options``' to validate)."""
    body = line["request"]
    for field, kind, words in (("cwd", str, "a string"), ("env", dict, "an object"), ("options", dict, "an object")):
        if not isinstance(body.get(field), kind):
            raise ProtocolError(f"covey_run needs {field}, {words}")
    if not all(isinstance(value, str) for value in body["env"].values()):
        raise ProtocolError("covey_run's env holds strings only")
    flags = body.get("run") or {}
    if not isinstance(flags, dict):
        raise ProtocolError("covey_run's run flags must be an object")
    return {"type": "control_request", "request_id": line["request_id"],
            "request": {"subtype": "covey_run", "cwd": body["cwd"], "env": body["env"], "options": body["options"],
                        "run": cast(RunFlags, flags)}}


class LineSource(Protocol):
    """Where a run reads its client: the next line as a value; None once the client has gone
    (or, for a conversation, closed the connection)."""

    async def next_line(self) -> RunLine | Unreadable | None: ...


class LineSink(Protocol):
    """Where a run's lines go: its journal on a host, a socket in-process. ``closed``: nothing
    more can be put (the client has gone)."""

    def closed(self) -> bool: ...

    async def put(self, line: Mapping[str, Any]) -> None: ...


class HostPort(Protocol):
    """What the service asks of a session host (``HostHandle``)."""

    name: str

    async def start(self, request: RunRequest, meta: RunMeta) -> None: ...

    def follow(self, run_id: str, after: int = -1) -> AsyncIterator[tuple[int, list[bytes]]]: ...

    async def take(self, run_id: str, line: RunLine | Unreadable | None) -> None: ...

    async def cancel(self, why: str, run_id: str | None = None) -> None: ...

    async def ended(self) -> bool: ...

    async def reset(self) -> bool: ...

    async def status(self) -> dict[str, Any]: ...


class StreamSource:
    """A run's client on a socket of its own (``--no-service``, tests): each line read here."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def next_line(self) -> RunLine | Unreadable | None:
        try:
            raw = await self.reader.readline()
        except ValueError as exc:  # over the reader's limit: asyncio drops what it read, and reads on
            return Unreadable(f"{exc} (the limit is {protocol.LINE_LIMIT:,} bytes a line)")
        except (ConnectionError, OSError):
            return None
        return read_line(raw) if raw else None


class StreamSink:
    """A run's lines written to a socket, one JSON line each."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    def closed(self) -> bool:
        return self.writer.is_closing()

    async def put(self, line: Mapping[str, Any]) -> None:
        self.writer.write(protocol.encode(line))
        await self.writer.drain()


def _conforming(source: StreamSource, sink: StreamSink) -> tuple[LineSource, LineSink]:
    """Never called: the type checker holds these classes to their protocols."""
    return source, sink
