"""The session's debug log: ``--debug``, ``--debug-file PATH``, ``--debug-to-stderr`` (the SDKs'
``debug``, ``debugFile``, ``extra_args={"debug-to-stderr": None}``).

As Claude Code's, a file of timestamped lines (``2026-01-01T00:00:00.000Z [DEBUG] ...``). It holds
what the session's own process logs (every ``covey`` logger, from DEBUG up: settings, plugins,
hooks, MCP, the service's control requests) and the step line of each event the session streams
(``covey.events.describe.describe``: a reply, a tool call and its result, a sub-agent started, a result).
What the agents' actors log stays in Ray's logs. ``--debug`` writes ``<config>/debug/<session
id>.txt`` and points ``<config>/debug/latest`` at it, as Claude Code does; ``--debug-to-stderr``
is a file the ``covey`` command copies to its stderr (covey/cli/sdk_flags.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import AsyncIterator, ClassVar

from covey.events import Event
from covey.events.describe import describe

log = logging.getLogger("covey.session")

LEVELS = {"WARNING": "WARN", "CRITICAL": "ERROR"}
"""Python's level names as Claude Code's debug log writes them (others are the same)."""


class DebugLog(logging.Handler):
    """One session's debug log, open from the session's start to its close."""

    _open: ClassVar[int] = 0
    _level_before: ClassVar[int] = logging.NOTSET

    def __init__(self, path: Path, *, named: bool = False) -> None:
        super().__init__(logging.DEBUG)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.named = named
        """The file is named after the session (``--debug``'s own place): it follows a new id."""
        self.file = os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a", encoding="utf-8")
        logger = logging.getLogger("covey")
        if DebugLog._open == 0:
            DebugLog._level_before = logger.level
        DebugLog._open += 1
        logger.setLevel(logging.DEBUG)
        logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.line(record.getMessage(), LEVELS.get(record.levelname, record.levelname))
        except Exception:  # a log line must never fail what logged it
            self.handleError(record)

    def line(self, text: str, level: str = "DEBUG") -> None:
        stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        with self.lock or contextlib.nullcontext():
            if not self.file.closed:
                self.file.write(f"{stamp} [{level}] {text}\n")
                self.file.flush()

    async def follow(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        """``events`` as they come, each one's step lines written first."""
        async with contextlib.aclosing(events):  # type: ignore[type-var]
            async for event in events:
                for text in describe(event) or [f"[{(event.agent_id or 'session')[:14]}] {type(event).__name__}"]:
                    self.line(text)
                yield event

    def renamed(self, session_id: str) -> None:
        """The session took another id (a served one takes its kit's): a file named after it follows."""
        if not self.named:
            return
        moved = self.path.with_name(f"{session_id}.txt")
        try:
            os.replace(self.path, moved)  # the open file stays open: writes go on to it
        except OSError as exc:
            log.warning("the debug log %s could not be renamed to %s: %s", self.path, moved.name, exc.strerror)
            return
        self.path = moved
        _point_latest(moved)
        self.line(f"the session takes the id {session_id}: debug log {moved}")

    def close(self) -> None:
        logger = logging.getLogger("covey")
        if self in logger.handlers:
            logger.removeHandler(self)
            DebugLog._open -= 1
            if DebugLog._open == 0:
                logger.setLevel(DebugLog._level_before)
        with self.lock or contextlib.nullcontext():
            self.file.close()
        super().close()


def open_debug_log(debug: str | None, config_dir: Path, session_id: str, cwd: Path) -> DebugLog | None:
    """The log the ``debug`` option asks for ("" for Claude Code's own place), else None. One that
    cannot be written is a warning: the run goes on without it."""
    if debug is None:
        return None
    path = Path(debug) if debug else config_dir.expanduser() / "debug" / f"{session_id}.txt"
    try:
        opened = DebugLog(path, named=not debug)
    except OSError as exc:
        log.warning("the debug log %s cannot be written (%s); the run goes on without it", path, exc.strerror)
        return None
    if not debug:
        _point_latest(path)
    opened.line(f"covey session {session_id} in {cwd}: debug log {path}")
    return opened


def _point_latest(path: Path) -> None:
    latest = path.parent / "latest"
    with contextlib.suppress(OSError):
        latest.unlink(missing_ok=True)
        latest.symlink_to(path)
