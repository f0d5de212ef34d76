"""One append-only JSONL transcript per agent (docs/subagents.md#transcripts).

Each record is one message with a ``uuid`` and the ``parentUuid`` of the record
before it, so a transcript is a chain that resume can rebuild. Appending is
O(1): the writer keeps the last uuid and an open file, and writes in a thread
so an actor's event loop never waits on the disk.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

DEFAULT_DIR = Path("~/.covey/transcripts")


def transcript_path(base: str | os.PathLike | None, session_id: str, agent_id: str) -> Path:
    root = Path(base).expanduser() if base else DEFAULT_DIR.expanduser()
    return root / session_id / f"{agent_id}.jsonl"


INLINE_WRITE_CHARS = 64 * 1024
"""Lines shorter than this are written on the event loop; longer ones in a thread."""


class TranscriptWriter:
    def __init__(self, path: Path, *, session_id: str, agent_id: str) -> None:
        self.path = path
        self.session_id = session_id
        self.agent_id = agent_id
        self.last_uuid: str | None = None
        self._file = None

    async def append(self, type: str, message: dict[str, Any], **extra: Any) -> str:
        record = {
            "uuid": str(uuid.uuid4()),
            "parentUuid": self.last_uuid,
            "type": type,
            "sessionId": self.session_id,
            "agentId": self.agent_id,
            "timestamp": time.time(),
            "message": message,
            **extra,
        }
        self.last_uuid = record["uuid"]
        line = json.dumps(record, default=str) + "\n"
        if len(line) < INLINE_WRITE_CHARS:
            self._write(line)  # a small append costs microseconds; a thread hop costs more
        else:
            await asyncio.to_thread(self._write, line)
        return record["uuid"]

    def _write(self, line: str) -> None:
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8")
        self._file.write(line)
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    @classmethod
    def continuing(cls, path: Path, *, session_id: str, agent_id: str) -> TranscriptWriter:
        """A writer that appends to an existing transcript (a resumed session): chained to its
        last complete record, and after its torn last line, if any, is ended, so that the next
        record starts on a line of its own instead of being glued to the fragment."""
        writer = cls(path, session_id=session_id, agent_id=agent_id)
        writer.last_uuid = last_uuid(path)
        end_torn_line(path)
        return writer


def read_transcript(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a transcript, in order; a torn last line (a crash mid-write) is skipped."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


def rebuild_history(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The conversation a transcript records, as Messages API messages (for resume).

    Consecutive records of one role are merged (a tool result and the notices
    that joined it were one message); a dangling tool_use at the end (a run cut
    off mid-call) is dropped so the history stays valid.
    """
    messages: list[dict[str, Any]] = []
    for record in read_transcript(Path(path)):
        message = record.get("message") or {}
        role, content = message.get("role"), _blocks(message.get("content"))
        if role not in ("user", "assistant") or not content:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"] += content
        else:
            messages.append({"role": role, "content": content})
    if messages and messages[-1]["role"] == "assistant":
        kept = [b for b in messages[-1]["content"] if b.get("type") != "tool_use"]
        messages[-1]["content"] = kept
        if not kept:
            messages.pop()
    return messages


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [dict(block) for block in content or []]


def last_uuid(path: str | os.PathLike) -> str | None:
    """The ``uuid`` of a transcript's last complete record (None: none, or no file)."""
    found = None
    if os.path.exists(path):
        for record in read_transcript(Path(path)):
            found = record.get("uuid", found)
    return found


def end_torn_line(path: str | os.PathLike) -> bool:
    """End a torn last line (a crash mid-write) with a newline; True if there was one.

    The fragment stays on its own line, which ``read_transcript`` skips; nothing is cut away.
    """
    try:
        with open(path, "rb+") as handle:
            if handle.seek(0, os.SEEK_END) == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) == b"\n":
                return False
            handle.write(b"\n")
            return True
    except FileNotFoundError:
        return False


def copy_transcript(source: str | os.PathLike, dest: str | os.PathLike, *, session_id: str) -> int:
    """Copy a transcript's complete records to ``dest`` under another session id (a fork); the
    count copied. ``uuid``/``parentUuid`` are kept, so the copy is the same chain. Written to a
    temporary file and renamed: ``dest`` holds the whole copy or does not exist."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    count = 0
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            for record in read_transcript(Path(source)):
                out.write(json.dumps({**record, "sessionId": session_id}, default=str) + "\n")
                count += 1
        os.replace(temp, dest)
    finally:
        Path(temp).unlink(missing_ok=True)
    return count
