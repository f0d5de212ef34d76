"""Reading covey's transcripts, in Claude Code's record format or covey's older one, and the
file operations resume needs (docs/resume.md).

covey's older records (before it wrote Claude Code's format) are spaced JSON with the
``timestamp`` in epoch seconds; every reader here takes both, so sessions under
``~/.covey/transcripts`` written by an older covey still resume.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from covey.common.bounded import open_regular
from covey.common.private_dirs import private_dir
from covey.common.safe_files import load_json

COMPACT = (",", ":")
"""Claude Code's separators: no spaces (scripts grep for ``"type":"user"``)."""
DEFERRED_TOOL = "hook_deferred_tool"
"""The ``attachment`` type of a call a PreToolUse hook deferred (Claude Code's)."""


MAX_RECORD_BYTES = 64 * 1024 * 1024
"""A transcript line longer than this is skipped unparsed (read on in chunks, never held whole)."""
_SKIP_CHUNK_BYTES = 1024 * 1024


def read_transcript(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a transcript, in order. A line that is no record is skipped: a torn last line
    (a crash mid-write), one that is not a JSON object, not UTF-8, nested too deep, or over
    :data:`MAX_RECORD_BYTES`. Only a regular file is opened (``NotRegularFile``, an ``OSError``,
    for a FIFO or device: reading one could block for ever)."""
    with open_regular(path) as handle:
        while line := handle.readline(MAX_RECORD_BYTES + 1):
            if len(line) > MAX_RECORD_BYTES and not line.endswith(b"\n"):
                _skip_line(handle)
                continue
            try:
                record = load_json(line)
            except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep
                continue
            if isinstance(record, dict):
                yield record


def _skip_line(handle: BinaryIO) -> None:
    """Read past the rest of an over-long line, a chunk at a time."""
    while chunk := handle.readline(_SKIP_CHUNK_BYTES):
        if chunk.endswith(b"\n"):
            return


def record_time_s(record: dict[str, Any]) -> float | None:
    """A record's time in epoch seconds: Claude Code's ISO 8601 string, or the number covey wrote
    before it followed Claude Code's format; None if it has neither."""
    value = record.get("timestamp")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def rebuild_history(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The conversation a transcript records, as Messages API messages (for resume).

    A compaction's boundary record restarts it: the summary and what follows stand for what came
    before, as in Claude Code. Only the ``role`` and ``content`` of each record's message are kept (an assistant record holds
    the API's whole message). Consecutive records of one role are merged (a tool result and the
    notices that joined it were one message; Claude Code splits one reply over several records);
    a dangling tool_use at the end (a run cut off mid-call) is dropped so the history stays valid,
    unless a PreToolUse hook deferred it (a ``hook_deferred_tool`` record follows): a resumed
    session runs it first (``covey.loop.steps.pending_calls``).
    """
    messages: list[dict[str, Any]] = []
    deferred = False
    for record in read_transcript(Path(path)):
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            messages = []  # what came before a compaction is in its summary, after the boundary
            continue
        deferred = deferred or _deferral(record)  # until a message comes after it
        message = record.get("message")
        if not isinstance(message, dict):
            continue  # a record that is no message (Claude Code's summary, say)
        role, content = message.get("role"), _blocks(message.get("content"))
        if role not in ("user", "assistant") or not content:
            continue
        deferred = False
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"] += content
        else:
            messages.append({"role": role, "content": content})
    if messages and messages[-1]["role"] == "assistant" and not deferred:
        kept = [b for b in messages[-1]["content"] if b.get("type") != "tool_use"]
        messages[-1]["content"] = kept
        if not kept:
            messages.pop()
    return messages


def deferred_record(call: dict[str, Any]) -> dict[str, Any]:
    """The ``attachment`` of a call a PreToolUse hook deferred, as Claude Code records it."""
    return {"type": DEFERRED_TOOL, "toolUseID": call.get("id"), "toolName": call.get("name"),
            "toolInput": call.get("input"), "hookEvent": "PreToolUse"}


def _deferral(record: dict[str, Any]) -> bool:
    attachment = record.get("attachment")
    return isinstance(attachment, dict) and attachment.get("type") == DEFERRED_TOOL


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        return []
    return [dict(block) for block in content if isinstance(block, dict)]  # a hostile line's junk is dropped


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


def copy_transcript(source: str | os.PathLike, dest: str | os.PathLike, *, session_id: str,
                    records: list[dict[str, Any]] | None = None) -> int:
    """Copy a transcript's complete records to ``dest`` under another session id (a fork); the
    count copied. ``uuid``/``parentUuid`` are kept, so the copy is the same chain; records are
    written compact, as Claude Code's (an old record keeps its fields). Written to a temporary
    file and renamed: ``dest`` holds the whole copy or does not exist. ``records``: these of
    ``source``'s instead of all (a truncating resume's)."""
    dest = Path(dest)
    private_dir(dest.parent, "transcript folder")
    handle, temp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    count = 0
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            for record in read_transcript(Path(source)) if records is None else records:
                out.write(json.dumps({**record, "sessionId": session_id}, separators=COMPACT, default=str) + "\n")
                count += 1
        os.replace(temp, dest)
    finally:
        Path(temp).unlink(missing_ok=True)
    return count
