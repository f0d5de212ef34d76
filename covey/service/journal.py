"""What a served run said, kept so that a client may leave and another read it all later.

A run's lines (each one JSON line as the service sends it: the session's id, events,
stderr lines, control requests, ``covey_done``) are numbered from 0, kept in memory for
the clients that follow the run, and appended to a file once the run's first answer
names its session: ``<covey dir>/sessions/<session id>.jsonl``, beside
``<session id>.json``, what ``covey sessions`` lists (the cwd, when it started and
ended, the client's output format, how the run ended). Both are the user's alone
(``covey.common.private_dirs``). A reader that comes after the run's host has gone reads the file.

A question the run asked its client (a ``control_request``: a permission prompt, an SDK
hook callback) that has been answered is left out of what a later reader is sent: it
must not be asked twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, BinaryIO, Mapping

from covey.client.ports import encode
from covey.common.private_dirs import open_private, private_dir


def sessions_dir(home: Path | None = None) -> Path:
    return (home or Path.home()) / ".covey" / "sessions"


class RunLog:
    """The numbered lines of one run; ``put`` makes it the run's ``LineSink``."""

    def __init__(self, meta: Mapping[str, Any], folder: Path | None = None) -> None:
        self.lines: list[bytes] = []
        self.meta: dict[str, Any] = {**meta, "started_at": meta.get("started_at", time.time()), "status": "running"}
        self.folder = folder or sessions_dir()
        self.session_id: str | None = None
        self.answered: set[str] = set()
        """Request ids of the run's questions that were answered."""
        self.asked: dict[str, int] = {}
        """A question's request id → its line's number."""
        self.done = False
        self._file: BinaryIO | None = None
        self._grew = asyncio.Event()

    # The run's LineSink (covey.service.ports): each line comes as a value, encoded here once.
    def closed(self) -> bool:
        return False

    async def put(self, line: Mapping[str, Any]) -> None:
        self.add(line)

    def add(self, line: Mapping[str, Any]) -> None:
        number = len(self.lines)
        data = encode(line)
        self.lines.append(data)
        if self._file is not None:
            self._file.write(data)
            self._file.flush()
        self._notice(line, number)
        self._grew.set()

    def _notice(self, message: Mapping[str, Any], number: int) -> None:
        if message.get("type") == "control_request":
            self.asked[message.get("request_id", "")] = number
        elif message.get("type") == "covey_done":
            self.finish(message)
        elif self.session_id is None and (session_id := _session_of(message)):
            self._bind(session_id)

    def _bind(self, session_id: str) -> None:
        """The run's session is known: its file starts with what was said so far (none for a run
        with ``--no-session-persistence``: it is followed live only, and not listed)."""
        self.session_id = session_id
        self.meta["session_id"] = session_id
        if self.meta.get("persist") is False:
            return
        folder = private_dir(self.folder, "covey sessions folder")
        self._file = os.fdopen(open_private(folder / f"{session_id}.jsonl", os.O_WRONLY | os.O_TRUNC), "wb")
        self._file.writelines(self.lines)
        self._file.flush()
        self.save_meta()

    def answer(self, request_id: str) -> None:
        """The client answered this question: later readers are not asked it."""
        self.answered.add(request_id)

    def waiting(self) -> list[dict[str, Any]]:
        """The questions asked and not answered yet (a detached run's wait for a client), as
        ``covey sessions`` lists them: request id, tool, the prompt's words."""
        found = []
        for request_id, number in self.asked.items():
            if request_id not in self.answered:
                request = json.loads(self.lines[number]).get("request") or {}
                found.append({"request_id": request_id, "subtype": request.get("subtype"),
                              "tool_name": request.get("tool_name"), "message": request.get("message", ""),
                              "input": request.get("input")})
        return found

    def finish(self, done: Mapping[str, Any]) -> None:
        self.done = True
        self.meta["answered"] = sorted(self.answered & set(self.asked))
        self.meta.update(status="interrupted" if done.get("interrupted") else "failed" if done.get("error")
                         else "finished", ended_at=time.time())
        if done.get("error"):
            self.meta["error"] = done["error"]
        self.save_meta()
        if self._file is not None:
            self._file.close()
            self._file = None
        self._grew.set()

    def save_meta(self) -> None:
        if self.session_id is None or self.meta.get("persist") is False:
            return
        folder = private_dir(self.folder, "covey sessions folder")
        partial = folder / f"{self.session_id}.json.partial"
        with os.fdopen(open_private(partial, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as handle:
            json.dump(self.meta, handle)
        os.replace(partial, folder / f"{self.session_id}.json")

    def since(self, after: int) -> list[bytes]:
        """The lines after line ``after`` (-1: all), answered questions left out."""
        skip = {self.asked[request_id] for request_id in self.answered if request_id in self.asked}
        return [line for number, line in enumerate(self.lines[after + 1:], after + 1) if number not in skip]

    async def batches(self, after: int = -1) -> AsyncIterator[tuple[int, list[bytes]]]:
        """Every line after ``after`` as it comes, in batches (each with the number of its
        last line, where a reader that comes back starts), until the run is done."""
        while True:
            self._grew.clear()
            if len(self.lines) - 1 > after:
                batch, after = self.since(after), len(self.lines) - 1
                yield after, batch
            elif self.done:
                return
            else:
                await self._grew.wait()


def _session_of(message: Mapping[str, Any]) -> str | None:
    response = message.get("response") if message.get("type") == "control_response" else None
    answer = response.get("response") if isinstance(response, dict) else None
    session_id = answer.get("session_id") if isinstance(answer, dict) else None
    return session_id if isinstance(session_id, str) else None


if TYPE_CHECKING:
    from covey.service.ports import LineSink

    def _conforming(journal: RunLog) -> LineSink:
        """Never called: the type checker holds ``RunLog`` to ``LineSink``."""
        return journal


def read_meta(session_id: str, folder: Path | None = None) -> dict[str, Any] | None:
    try:
        meta = json.loads(((folder or sessions_dir()) / f"{session_id}.json").read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def read_lines(session_id: str, folder: Path | None = None) -> list[bytes]:
    """A finished run's lines from its file, the questions that were answered left out."""
    try:
        lines = (folder or sessions_dir()).joinpath(f"{session_id}.jsonl").read_bytes().splitlines(keepends=True)
    except OSError:
        return []
    answered = set((read_meta(session_id, folder) or {}).get("answered") or ())
    return [line for line in lines if not (answered and b'"control_request"' in line
                                           and json.loads(line).get("request_id") in answered)]


def all_meta(folder: Path | None = None) -> list[dict[str, Any]]:
    """Every session this user's service ran, oldest first."""
    found = []
    for path in (folder or sessions_dir()).glob("*.json"):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return sorted(found, key=lambda meta: meta.get("started_at", 0))
