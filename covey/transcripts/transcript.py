"""One append-only JSONL transcript per agent, in Claude Code's record format (docs/subagents.md#transcripts).

Each line is one message as Claude Code writes it to ``~/.claude/projects/…/<session>.jsonl``:
compact JSON with ``parentUuid``, ``isSidechain``, ``userType``, ``cwd``, ``sessionId``,
``version``, ``gitBranch``, ``type``, ``message``, ``uuid`` and an ISO 8601 ``timestamp``, plus
``requestId`` on assistant records, ``toolUseResult`` on user records that answer a call and
``agentId`` on a sub-agent's, so hook scripts and tools written for Claude Code read covey's
transcripts. The ``uuid``/``parentUuid`` chain is what resume rebuilds. Appending is O(1): the
writer keeps the last uuid and an open file, and writes a long line in a thread so an actor's
event loop never waits on the disk. Readers also take covey's older records (spaced JSON, the
``timestamp`` in epoch seconds), which sessions under ``~/.covey/transcripts`` may still hold.
Where each transcript is (Claude Code's ``projects`` folder): ``covey.transcripts.session_files``.
A transcript is 0600 in a 0700 folder (``covey.common.private_dirs``).
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

from covey.transcripts.session_files import (  # noqa: F401
    agent_meta, agent_transcript, sdk_agent_id, transcript_path, write_agent_meta,
)
from covey.transcripts.transcript_read import (  # noqa: F401  (the readers, importable from here too)
    COMPACT, copy_transcript, end_torn_line, last_uuid, read_transcript, rebuild_history, record_time_s,
)
from covey.common.private_dirs import open_private, private_dir
from covey.events import CLAUDE_CODE_VERSION, now_iso


INLINE_WRITE_CHARS = 64 * 1024
"""Lines shorter than this are written on the event loop; longer ones in a thread."""


class TranscriptWriter:
    """Appends one agent's records. ``cwd`` and ``sidechain`` (a sub-agent's) are stamped on each
    record as Claude Code does; the git branch is read once, from ``cwd``."""

    def __init__(self, path: Path, *, session_id: str, agent_id: str, cwd: str | os.PathLike = "",
                 sidechain: bool = False) -> None:
        self.mirror: Callable[[Path, dict[str, Any]], None] | None = None
        """Also told of each record written (``--session-mirror``), after it is on disk."""
        self.path = path
        self.session_id = session_id
        self.agent_id = agent_id
        self.last_uuid: str | None = None
        self._file: TextIO | None = None
        self._stamp = {
            "isSidechain": sidechain, "userType": "external", "cwd": str(cwd), "sessionId": session_id,
            "version": CLAUDE_CODE_VERSION, "gitBranch": git_branch(cwd) if cwd else "",
        }
        if sidechain:  # Claude Code names the agent on a sub-agent's records only, as its file does: no "agent-"
            self._stamp["agentId"] = sdk_agent_id(agent_id)
        self.meta: dict[str, Any] | None = None
        """A sub-agent's metadata (``agent_meta``), marked ``finished`` when the writer closes."""

    async def append(self, type: str, message: dict[str, Any] | None, *, uuid: str | None = None,
                     timestamp: str | None = None, **extra: Any) -> str:
        """Write one record; ``uuid``/``timestamp`` default to new ones (an event's own keep the
        stream-json line and the record the same message). ``extra`` keys set to None are left out."""
        record = {
            "parentUuid": self.last_uuid, **self._stamp, "type": type,
            **({"message": message} if message is not None else {}),
            "uuid": uuid or _new_uuid(), "timestamp": timestamp or now_iso(),
            **{key: value for key, value in extra.items() if value is not None},
        }
        if _answers_tools(type, message) and self.last_uuid is not None:
            record.setdefault("sourceToolAssistantUUID", self.last_uuid)
        self.last_uuid = record["uuid"]
        line = json.dumps(record, separators=COMPACT, default=str) + "\n"
        if len(line) < INLINE_WRITE_CHARS:
            self._write(line)  # a small append costs microseconds; a thread hop costs more
        else:
            await asyncio.to_thread(self._write, line)
        if self.mirror is not None:
            self.mirror(self.path, record)
        return record["uuid"]

    async def append_compaction(self, *, trigger: str, pre_tokens: int, summary: dict[str, Any],
                                attachments: list[dict[str, Any]], context: Sequence[dict[str, Any]] = (),
                                uuid: str | None = None, timestamp: str | None = None) -> str:
        """A compaction as Claude Code records one: a ``system``/``compact_boundary`` record that
        starts a new chain (``parentUuid`` null, ``logicalParentUuid`` the record before), the summary
        as a user record marked ``isCompactSummary``, and what came back with it (meta: the project
        context before the summary, files and hook context after). Resume starts from the last
        boundary (``rebuild_history``)."""
        logical = self.last_uuid
        self.last_uuid = None
        boundary = await self.append(
            "system", None, uuid=uuid, timestamp=timestamp, subtype="compact_boundary",
            content="Conversation compacted", isMeta=False, level="info", logicalParentUuid=logical,
            compactMetadata={"trigger": trigger, "preTokens": pre_tokens},
        )
        for message in context:
            await self.append("user", message, isMeta=True)
        await self.append("user", summary, isCompactSummary=True, isVisibleInTranscriptOnly=True)
        if attachments:
            await self.append("user", {"role": "user", "content": attachments}, isMeta=True)
        return boundary

    def _write(self, line: str) -> None:
        if self._file is None:  # a transcript holds the whole conversation: the user's eyes only
            private_dir(self.path.parent, "transcript folder")
            self._file = os.fdopen(open_private(self.path, os.O_WRONLY | os.O_APPEND), "a", encoding="utf-8")
        self._file.write(line)
        self._file.flush()

    def agent_metadata(self, meta: dict[str, Any]) -> None:
        """A sub-agent's metadata, where Claude Code keeps it: its ``.meta.json`` and, mirrored, an
        ``agent_metadata`` entry of its transcript (the SDK's store keeps it in the sidecar's place;
        the last one wins). Written when the run starts and again, ``finished``, when it ends."""
        self.meta = meta
        write_agent_meta(self.path, meta)
        self.mirror_metadata()

    def mirror_metadata(self) -> None:
        if self.mirror is not None and self.meta is not None:
            self.mirror(self.path, {"type": "agent_metadata", **self.meta})

    def close(self) -> None:
        if self.meta is not None and not self.meta.get("finished"):
            self.agent_metadata({**self.meta, "finished": True})
        if self._file is not None:
            self._file.close()
            self._file = None

    @classmethod
    def continuing(cls, path: Path, *, session_id: str, agent_id: str, **stamp: Any) -> TranscriptWriter:
        """A writer that appends to an existing transcript (a resumed session): chained to its
        last complete record, and after its torn last line, if any, is ended, so that the next
        record starts on a line of its own instead of being glued to the fragment."""
        writer = cls(path, session_id=session_id, agent_id=agent_id, **stamp)
        writer.last_uuid = last_uuid(path)
        end_torn_line(path)
        return writer


def open_agent_transcript(spec: Any) -> TranscriptWriter:
    """An agent run's transcript (``spec`` an ``AgentSpec``): a resumed agent or a conversation's
    next turn continues its chain; a sub-agent's gets Claude Code's ``.meta.json`` beside it."""
    path = agent_transcript(spec)
    open_writer = TranscriptWriter.continuing if spec.history and path.exists() else TranscriptWriter
    writer = open_writer(path, session_id=spec.session_id, agent_id=spec.agent_id, cwd=spec.cwd,
                         sidechain=spec.depth > 0)
    if spec.depth > 0:
        writer.agent_metadata(agent_meta(spec))
    return writer


def _new_uuid() -> str:
    return str(uuid.uuid4())


def _answers_tools(type: str, message: dict[str, Any] | None) -> bool:
    content = message.get("content") if message is not None else None
    return type == "user" and isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content)


def git_branch(cwd: str | os.PathLike) -> str:
    """The branch checked out where ``cwd`` is, as Claude Code records it: ``""`` outside a
    repository, ``"HEAD"`` when detached. Read from the HEAD file (no git process per agent)."""
    start = Path(cwd).absolute()
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        try:
            if dot_git.is_file():  # a linked worktree or submodule: "gitdir: <its git directory>"
                head = directory / dot_git.read_text(encoding="utf-8").strip().removeprefix("gitdir:").strip() / "HEAD"
            elif dot_git.is_dir():
                head = dot_git / "HEAD"
            else:
                continue
            ref = head.read_text(encoding="utf-8").strip()
        except OSError:
            return ""
        return ref.removeprefix("ref: refs/heads/") if ref.startswith("ref: refs/heads/") else "HEAD"
    return ""
