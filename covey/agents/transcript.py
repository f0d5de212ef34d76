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
