"""Automatic compaction (docs/compaction.md): when a conversation nears its model's window, the
model summarises it and the summary, with the files read last, stands for it from then on.

The threshold is Claude Code's: the window less what the summary may take (the model's output
limit, at most 20,000 tokens) is the effective window; compaction starts 13,000 tokens short of
it, or at ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` percent of it if that is lower. For small windows
(a local model, a test) the reserve is at most a quarter of the window and the margin at most a
tenth of the effective window, so that there is still room to work. The context is measured as
Claude Code measures it: the last reply's reported usage (input, cache and output tokens) plus
about a token per four characters of what was added since.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

from covey.loop.compact_prompt import continuation, summary_request, summary_text
from covey.model.limits import LimitTable

SUMMARY_RESERVE = 20_000
MARGIN = 13_000
PCT_ENV = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
OFF_ENVS = ("DISABLE_AUTO_COMPACT", "DISABLE_COMPACT")
MAX_FAILURES = 3
"""Consecutive failed summaries after which an agent stops trying (Claude Code's circuit breaker)."""
RESTORE_FILES = 5
RESTORE_FILE_CHARS = 5_000 * 4
RESTORE_TOTAL_CHARS = 50_000 * 4
"""Files read before a compaction come back after it, as Claude Code's docs say: at most 5, the most
recently modified first; one over about 5,000 tokens comes back as its path only; 50,000 in all."""


@dataclass(frozen=True)
class CompactLimits:
    window: int
    reserve: int
    """The summary request's ``max_tokens``."""
    threshold: int | None
    """Context tokens at which compaction starts; None: automatic compaction is off."""


def compact_limits(model_id: str, table: LimitTable, env: Mapping[str, str], *, enabled: bool = True) -> CompactLimits:
    window = table.window(model_id)
    reserve = min(table.max_tokens(model_id), SUMMARY_RESERVE, window // 4)
    effective = window - reserve
    threshold = effective - min(MARGIN, effective // 10)
    pct = _percent(env.get(PCT_ENV))
    if pct is not None:
        threshold = min(int(effective * pct / 100), threshold)
    off = not enabled or any(_truthy(env.get(name)) for name in OFF_ENVS)
    return CompactLimits(window=window, reserve=reserve, threshold=None if off else threshold)


def _percent(value: str | None) -> float | None:
    try:
        pct = float(value) if value else None
    except ValueError:
        return None
    return pct if pct is not None and 0 < pct <= 100 else None


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """About a token per four characters (the usual rough rate), for messages no reply has counted yet."""
    return len(json.dumps(messages, default=str)) // 4 if messages else 0


@dataclass
class Compaction:
    """What one compaction produced: the messages that replace the conversation, and its figures."""

    messages: list[dict[str, Any]]
    context: list[dict[str, Any]]
    """The agent's project context (CLAUDE.md, ...) again, before the summary."""
    summary: dict[str, Any]
    """The summary user message (the transcript marks it as the compact summary)."""
    attachments: list[dict[str, Any]]
    """Content blocks after the summary: files read again, SessionStart context."""
    pre_tokens: int
    trigger: str
    reply: Any
    """The summary request's reply (its usage and cost count)."""


@dataclass
class Compactor:
    """One agent's compaction: its limits, hooks and read-file cache. ``before`` runs the PreCompact
    hooks (``(trigger) -> (blocked, instructions)``), ``after`` the SessionStart ``compact`` and the
    PostCompact ones (``(trigger, summary) -> SessionStart context or None``)."""

    limits: CompactLimits
    before: Callable[[str], Awaitable[tuple[bool, str | None]]] | None = None
    after: Callable[[str, str], Awaitable[str | None]] | None = None
    read_files: dict[str, float] | None = None
    transcript: str | None = None
    context: list[dict[str, Any]] | None = None
    """Messages that lead every conversation of this agent (its project instructions, the agent
    and skill lists): they come back after a compaction, as Claude Code re-reads CLAUDE.md."""
    failures: int = 0

    def due(self, tokens: int) -> bool:
        limit = self.limits.threshold
        return limit is not None and self.failures < MAX_FAILURES and tokens >= limit

    async def instructions(self, trigger: str) -> tuple[bool, str | None]:
        return await self.before(trigger) if self.before is not None else (False, None)

    def request_messages(self, messages: list[dict[str, Any]], instructions: str | None) -> list[dict[str, Any]]:
        """The conversation as sent, the summary request joined to its last (user) message."""
        ask = {"type": "text", "text": summary_request(instructions)}
        last = messages[-1] if messages else None
        if last is not None and last["role"] == "user":
            return [*messages[:-1], {"role": "user", "content": [*_blocks(last["content"]), ask]}]
        return [*messages, {"role": "user", "content": [ask]}]

    async def finish(self, reply_text: str, *, pre_tokens: int, trigger: str, reply: Any) -> Compaction:
        """The messages after a successful summary: the agent's project context again, the summary,
        the files read last, what SessionStart hooks add (source ``compact``)."""
        text = summary_text(reply_text)
        summary = {"role": "user", "content": [{"type": "text", "text": continuation(
            text, self.transcript, auto=trigger == "auto")}]}
        attachments = self._restored_files()
        said = await self.after(trigger, text) if self.after is not None else None
        if said:
            attachments.append(_reminder(f"SessionStart hook additional context: {said}"))
        context = [dict(message) for message in self.context or []]
        messages = [*context, {"role": "user", "content": [*summary["content"], *attachments]}]
        self.failures = 0
        return Compaction(messages, context, summary, attachments, pre_tokens, trigger, reply)

    def _restored_files(self) -> list[dict[str, Any]]:
        """The files read, as they are now; the read-file cache keeps only those shown again (any
        other must be read again before it is changed, as in Claude Code)."""
        if self.read_files is None:
            return []
        blocks, budget, kept = [], RESTORE_TOTAL_CHARS, {}
        for path, mtime in _newest(self.read_files)[:RESTORE_FILES]:
            text = _file_text(Path(path))
            if text is None:
                continue
            if len(text) > min(RESTORE_FILE_CHARS, budget):
                blocks.append(_reminder(f"The file {path} was read before the conversation was compacted; it is "
                                        "too long to show again here. Read it again if you need it."))
                continue
            budget -= len(text)
            kept[path] = mtime
            blocks.append(_reminder(f"The file {path}, read before the conversation was compacted, as it is now:\n{text}"))
        self.read_files.clear()
        self.read_files.update(kept)
        return blocks


def _newest(read_files: dict[str, float]) -> list[tuple[str, float]]:
    """The files read that still exist, the most recently modified first."""
    found = []
    for path in read_files:
        try:
            found.append((path, os.path.getmtime(path)))
        except OSError:
            continue
    return sorted(found, key=lambda item: item[1], reverse=True)


def _reminder(text: str) -> dict[str, Any]:
    return {"type": "text", "text": f"<system-reminder>\n{text}\n</system-reminder>"}


def _file_text(path: Path) -> str | None:
    """A text file's lines numbered as Read shows them; None for a file gone or not text."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    if b"\0" in raw[:8192]:
        return None
    lines = raw.decode("utf-8", errors="replace").splitlines()
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, 1))


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
