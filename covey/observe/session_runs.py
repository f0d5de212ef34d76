"""A session's agents as run records read back from its files (``covey trace SESSION_ID``).

A session keeps, beside its ``session.json``, the main agent's transcript and each sub-agent's
(``<session>/subagents/agent-<id>.jsonl``) with its ``.meta.json`` (type, description, the Agent
call that launched it, its parent). From them: when each agent ran (its first and last record),
its tokens and cost (each reply's usage once, priced by its model), and how it ended: a
background child's ``<task-notification>`` status, a foreground child's tool result, a
transcript still open (``running``). Everything read is untrusted: a file or field that cannot
be read becomes one line in ``problems`` and the rest is still shown.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from covey.model.base import TokenUsage
from covey.model.pricing import PriceTable
from covey.transcripts.session_files import SessionRoots
from covey.transcripts.session_json import ResumeError, read_record, validate_session_id
from covey.transcripts.transcript import read_transcript, record_time_s

_NOTICE = re.compile(r"<tool-use-id>([^<]+)</tool-use-id>.*?<status>([a-z]+)</status>", re.DOTALL)
MAX_META_BYTES = 64 * 1024


@dataclass
class DiskRun:
    """What ``covey.observe.timeline`` and the trace read of a run record, read from disk."""

    agent_id: str
    agent_type: str
    description: str
    started_at: float
    ended_at: float | None
    status: str
    output_file: str
    parent_agent_id: str | None = None
    tool_use_id: str | None = None
    member_name: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    rate_waits: list[dict[str, Any]] = field(default_factory=list)


def find_session(text: str, transcript_dir: str | os.PathLike | None = None) -> str:
    """A session id from its id or the unique start of it (8 characters or more); ``ResumeError`` naming what matched."""
    if len(text) >= 36:
        return validate_session_id(text)
    if len(text) < 8 or not re.fullmatch(r"[0-9a-fA-F-]+", text):
        raise ResumeError(f"Invalid session ID {text!r}: give its id, or the first 8 characters of it or more.", text)
    root = SessionRoots.of(transcript_dir).absolute().root / "projects"
    found = sorted({path.name.removesuffix(".jsonl") for path in root.glob(f"*/{text.lower()}*")
                    if path.name.endswith(".jsonl") or path.is_dir()})
    if len(found) != 1:
        what = "no session" if not found else f"{len(found)} sessions ({', '.join(found[:3])})"
        raise ResumeError(f"Session id {text!r} matches {what} under {str(root)!r}.", text, str(root))
    return validate_session_id(found[0])


def runs_on_disk(session_id: str, transcript_dir: str | os.PathLike | None = None,
                 prices: PriceTable | None = None) -> tuple[list[DiskRun], list[str]]:
    """The session's agents (the main one first) and a line per file or field that could not be read."""
    record = read_record(transcript_dir, session_id)
    prices = prices or PriceTable.load()
    problems: list[str] = []
    main_path = Path(record.transcript)
    main_lines = _lines(main_path, problems)
    runs = [_run(record.main_agent_id, main_lines, main_path, {"agentType": "main"}, None, prices)]
    folder = main_path.with_suffix("") / "subagents"
    children = sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    lines_of = {path: _lines(path, problems) for path in children}
    for path in children:
        meta = _meta(path, problems)
        parent = meta.get("parentAgentId")  # the SDK's id (no "agent-"), given only below depth 1
        parent_id = record.main_agent_id if not isinstance(parent, str) else \
            parent if parent.startswith("agent-") else f"agent-{parent}"
        parent_lines = main_lines if parent_id == record.main_agent_id else \
            lines_of.get(folder / f"{parent_id}.jsonl", [])
        runs.append(_run(path.stem, lines_of[path], path, meta, (parent_id, parent_lines), prices))
    for run in runs:
        if not run.started_at:
            problems.append(f"{run.output_file!r}: no record with a time; {run.agent_type} {run.agent_id} is not drawn")
    return [run for run in runs if run.started_at], problems


def _run(agent_id: str, lines: list[dict[str, Any]], path: Path, meta: dict[str, Any],
         parent: tuple[str, list[dict[str, Any]]] | None, prices: PriceTable) -> DiskRun:
    times = [t for t in (record_time_s(line) for line in lines) if t is not None]
    usage, cost = _usage(lines, prices)
    tool_use_id = meta.get("toolUseId") if isinstance(meta.get("toolUseId"), str) else None
    status = _status(lines, meta, tool_use_id, parent[1] if parent else None)
    return DiskRun(agent_id=agent_id, agent_type=str(meta.get("agentType") or "agent"),
                   description=str(meta.get("description") or ""), started_at=min(times, default=0.0),
                   ended_at=None if status == "running" else max(times, default=None), status=status,
                   output_file=str(path), parent_agent_id=parent[0] if parent else None, tool_use_id=tool_use_id,
                   usage=usage, cost_usd=cost)


def _status(lines: list[dict[str, Any]], meta: dict[str, Any], tool_use_id: str | None,
            parent_lines: list[dict[str, Any]] | None) -> str:
    """How the agent ended, as its parent read it; a transcript not yet closed is ``running``."""
    for line in parent_lines or []:
        for block in _blocks(line):
            if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id \
                    and "Async agent launched" not in str(block.get("content")):
                return "failed" if block.get("is_error") else "completed"
            for call, status in _NOTICE.findall(str(block.get("text") or "")):
                if call == tool_use_id:
                    return status
    if parent_lines is None:  # the main agent: its last reply ended its turn
        last = next((line.get("message") for line in reversed(lines) if line.get("type") == "assistant"), None)
        stop = last.get("stop_reason") if isinstance(last, dict) else None
        return "completed" if stop in ("end_turn", "stop_sequence", "max_tokens", "refusal") else "running"
    return "unknown" if meta.get("finished") else "running"


def _usage(lines: list[dict[str, Any]], prices: PriceTable) -> tuple[TokenUsage, float]:
    """Tokens and cost of the agent's replies, each once (a reply is recorded a block a record)."""
    seen: set[str] = set()
    total, cost = TokenUsage(), 0.0
    for line in lines:
        message = line.get("message")
        if line.get("type") != "assistant" or not isinstance(message, dict) or not isinstance(message.get("usage"), dict):
            continue
        if (reply := str(message.get("id"))) in seen:
            continue
        seen.add(reply)
        try:
            usage = TokenUsage.model_validate({k: v for k, v in message["usage"].items() if v is not None})
        except (ValueError, TypeError):
            continue
        total = total + usage
        cost += prices.cost_usd(str(message.get("model") or ""), usage)
    return total, cost


def _blocks(line: dict[str, Any]) -> list[dict[str, Any]]:
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _lines(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    try:
        return list(read_transcript(path))
    except OSError as exc:
        problems.append(f"{str(path)!r}: the transcript could not be read ({exc.strerror or exc})")
        return []


def _meta(path: Path, problems: list[str]) -> dict[str, Any]:
    meta_path = path.with_name(path.stem + ".meta.json")
    if not meta_path.exists():
        return {}
    try:
        with open(meta_path, "rb") as handle:
            meta = json.loads(handle.read(MAX_META_BYTES + 1))
    except (OSError, ValueError) as exc:
        problems.append(f"{str(meta_path)!r}: not readable as JSON ({exc}); the agent's type and parent are unknown")
        return {}
    if not isinstance(meta, dict):
        problems.append(f"{str(meta_path)!r}: not a JSON object; the agent's type and parent are unknown")
        return {}
    return meta
