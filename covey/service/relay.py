"""A client's connection to a run on a session host (``covey.service.host``).

Each line the client sends is read here once, into a value (``ports.StreamSource``), and handed to
the host as it is; the run's lines come back as the journal's bytes, written out as they are.

``HostedRun`` is a ``covey -p`` (or SDK) client's run: it starts the run on a host and
relays. The client that started a run owns it: when its connection closes the host is
told (the run is cancelled, as before), unless the run was started with ``--detach``.
``attach`` serves a ``covey attach`` client: it reads the run from its first line (or the
journal file of a run whose host has gone), may answer its questions and interrupt it,
and leaving stops nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
import time

from covey.client import ports as protocol
from covey.client.ports import RunBody, RunRequest
from covey.errors import AgentUnavailable
from covey.service.host import HostHandle
from covey.service.journal import read_lines, read_meta
from covey.service.ports import HostPort, RunMeta, StreamSource

log = logging.getLogger(__name__)


class _Relay:
    """One client connection to one host."""

    def __init__(self, host: HostPort, run_id: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 client_pid: int | None) -> None:
        self.host, self.run_id, self.writer, self.client_pid = host, run_id, writer, client_pid
        self.lines = StreamSource(reader)
        """The client's lines, each read once, here."""
        self.started_at = time.time()
        self.owner = False
        """The client that started the run: its leaving cancels the run."""
        self.sent = 0

    async def relay(self, after: int = -1) -> int:
        """The run's lines to the client until the run ends or the client leaves; how many were sent.
        A client that leaves ends only its own relay (the run's owner also cancels the run); a line
        the host cannot take does not end it: the run's end, or the host's death, does."""
        inbound = asyncio.create_task(self._inbound())
        outbound = asyncio.create_task(self._outbound(after))
        try:
            await asyncio.wait({inbound, outbound}, return_when=asyncio.FIRST_COMPLETED)
            if inbound.done() and not outbound.done() and inbound.result() == "left":
                outbound.cancel()
            await asyncio.gather(outbound, return_exceptions=True)
        finally:
            for task in (inbound, outbound):
                task.cancel()
        return self.sent

    async def _outbound(self, after: int) -> None:
        try:
            async for _last, lines in self.host.follow(self.run_id, after):
                self.sent += len(lines)
                self.writer.writelines(lines)
                await self.writer.drain()
        except (ConnectionError, OSError):
            return
        except AgentUnavailable as exc:
            log.warning("a session host went during its run: %s", exc)
            self.writer.write(protocol.encode(protocol.done(f"the session's host died: {exc}")))
        except Exception as exc:  # the host no longer drives this run (an attach then reads its file)
            if self.sent or not self.owner:
                return
            log.exception("following the run on %s failed", self.host.name)
            self.writer.write(protocol.encode(protocol.done(f"the run could not be followed: {exc}")))
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.drain()

    async def _inbound(self) -> str:
        """The client's lines to the run; its end, for the run's owner, to the run too. "left" when
        the client has gone, "host gone" when the host could not take a line. A line that cannot
        be read goes to the run as ``Unreadable``: the run tells its client."""
        while (line := await self.lines.next_line()) is not None:
            try:
                await self.host.take(self.run_id, line)
            except AgentUnavailable as exc:
                log.warning("session host %s could not take a client's line: %s", self.host.name, exc)
                return "host gone"
        if self.owner:  # any other reader that leaves stops only its own relay
            with contextlib.suppress(AgentUnavailable):
                await self.host.take(self.run_id, None)
            return "owner left"
        return "left"


class HostedRun(_Relay):
    """A ``covey_run`` on a host: the run's first line comes from the client like any other."""

    def __init__(self, host: HostPort, request: RunRequest, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, client_pid: int | None) -> None:
        super().__init__(host, request["request_id"], reader, writer, client_pid)
        self.request, self.cwd = request, request["request"]["cwd"]
        self.flags = request["request"]["run"]
        self.owner = not self.flags.get("detach")

    def meta(self) -> RunMeta:
        persist = self.request["request"]["options"].get("session_persistence") is not False
        return {"host": self.host.name, "run_id": self.run_id, "persist": persist, "cwd": self.cwd, "client_pid": self.client_pid,
                "output_format": self.flags.get("output_format", "text"), "detached": not self.owner,
                "conversation": bool(self.flags.get("conversation")), "started_at": self.started_at}

    async def begin(self) -> None:
        """Start the run on the host; ``relay`` then follows it."""
        await self.host.start(self.request, self.meta())


def detach_refusal(request: RunBody) -> str | None:
    """Why a run cannot be detached, if it cannot: one that keeps no files (nobody could attach to it)."""
    if request["run"].get("detach") and request["options"].get("session_persistence") is False:
        return ("a detached run is followed from its session's files (covey attach, covey sessions): "
                "it cannot be run with --no-session-persistence")
    return None


async def attach(session_id: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 request_id: str, client_pid: int | None) -> None:
    """Follow a session's run: live from its host, or from its journal file once the host has gone."""
    meta = read_meta(session_id)
    if meta is None:
        writer.write(protocol.encode(protocol.error(request_id, f"no session {session_id!r} was run by the covey "
                                                               "service (see `covey sessions`)")))
        return
    writer.write(protocol.encode(protocol.success(request_id, meta)))
    try:
        host = HostHandle.named(meta["host"]) if meta.get("status") == "running" else None
    except ValueError:
        host = None
    if host is not None:
        try:
            if await _Relay(host, meta.get("run_id", ""), reader, writer, client_pid).relay():
                return
        except AgentUnavailable:
            pass  # its file has what it said
        meta = read_meta(session_id) or meta  # it ended meanwhile (its host may drive another run now)
    lines = read_lines(session_id)
    writer.writelines(lines)
    if not any(b'"covey_done"' in line for line in lines[-3:]):
        writer.write(protocol.encode(protocol.done(
            f"session {session_id}'s run stopped before it ended (its host is gone); its conversation is kept: "
            f"`covey -p --resume {session_id} ...` goes on from it")))
    await writer.drain()


def peer(writer: asyncio.StreamWriter) -> tuple[int | None, int | None]:
    """The client's pid and uid, from the kernel (Linux ``SO_PEERCRED``)."""
    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None, None
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid
