"""A session trace in the Chrome trace event format (Perfetto and chrome://tracing open it).

One track (thread) per agent; on it, the agent's whole run as a span, with
its model requests and tool calls nested inside, and each wait of a request for
the API's rate limit (the shared scheduler's queue, or a 429/529's retry-after)
inside its model request. Tool calls that ran together are drawn side by side, on
lanes under their agent's track; an arrow (a flow event) goes from each Agent call
to the child it launched. Built after the run from the
registry's records and each agent's transcript, so background agents on any
node are included. Timestamps are microseconds since the session's first event.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from covey.common.private_dirs import make_dirs, open_private
from covey.transcripts.transcript import read_transcript, record_time_s

PID = 1
LANES = 1000
"""An agent's lanes for calls run side by side are tracks ``tid * LANES + n``."""


def trace_events(records: Iterable[Any]) -> list[dict[str, Any]]:
    records = sorted(records, key=lambda r: r.started_at)
    if not records:
        return []
    origin = records[0].started_at - 1.0  # room for a child whose transcript starts before its record
    events: list[dict[str, Any]] = []
    agents: dict[str, dict[str, Any]] = {}
    calls: dict[str, dict[str, Any]] = {}
    for tid, record in enumerate(records, start=1):
        track = _agent_track(record, tid, origin)
        events += track
        agents[record.agent_id] = next(e for e in track if e.get("cat") == "agent")
        calls.update({e["args"]["tool_use_id"]: e for e in track if e.get("cat") == "tool"})
    return events + _spawn_flows(records, agents, calls)


def _spawn_flows(records: list[Any], agents: dict[str, dict[str, Any]],
                 calls: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """An arrow (a flow: ``s`` in the parent's Agent call, ``f`` at its child's start) per launched child."""
    flows: list[dict[str, Any]] = []
    for number, record in enumerate(records, start=1):
        call, child = calls.get(getattr(record, "tool_use_id", None) or ""), agents[record.agent_id]
        if call is None:  # the main agent, or a launch whose call is not in its parent's transcript
            continue
        start = call["ts"] + min(1, call["dur"] // 2)  # inside the call's slice, past a span that ends where it starts
        common = {"name": "launches", "cat": "spawn", "id": number, "pid": PID}
        flows += [{**common, "ph": "s", "tid": call["tid"], "ts": start},
                  {**common, "ph": "f", "bp": "e", "tid": child["tid"], "ts": max(child["ts"], start)}]
    return flows


def write_trace(path: str | Path, records: Iterable[Any]) -> Path:
    """Write the session's trace (0600: its spans carry every agent's descriptions and tool inputs; missing
    folders are made 0700)."""
    path = Path(path)
    make_dirs(path.parent)
    with os.fdopen(open_private(path, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"traceEvents": trace_events(records), "displayTimeUnit": "ms"}))
    return path


def _us(t: float, origin: float) -> int:
    return int((t - origin) * 1_000_000)


def _agent_track(record: Any, tid: int, origin: float) -> list[dict[str, Any]]:
    label = f"{record.agent_type} {record.member_name or record.agent_id}"
    lines = _transcript(record.output_file)
    # The agent's span must enclose its inner spans, whose times come from its transcript.
    times = [line["timestamp"] for line in lines]
    start = min([record.started_at, *times])
    end = max([record.ended_at or record.started_at, *times])
    agent_span = _span(f"{label}: {record.description}", "agent", start, end, tid, origin,
                       {"agent_id": record.agent_id, "status": record.status, "tokens": record.usage.total,
                        "cost_usd": record.cost_usd})
    inner = _inner_spans(lines, start, tid, origin)
    lanes = _lay_out(inner, tid)
    return [
        *(event for lane in range(lanes) for event in _track_names(label, tid, lane)),
        agent_span,
        *inner,
        *_rate_waits(getattr(record, "rate_waits", None) or [], tid, origin),
    ]


def _track_names(label: str, tid: int, lane: int) -> list[dict[str, Any]]:
    """A track's name and place: an agent's own, then its lanes for calls run side by side."""
    lane_tid = tid if lane == 0 else tid * LANES + lane
    name = label if lane == 0 else f"{label} (side by side {lane + 1})"
    return [{"ph": "M", "name": "thread_name", "pid": PID, "tid": lane_tid, "args": {"name": name}},
            {"ph": "M", "name": "thread_sort_index", "pid": PID, "tid": lane_tid, "args": {"sort_index": tid * LANES + lane}}]


def _lay_out(spans: list[dict[str, Any]], tid: int) -> int:
    """Move tool calls that overlap an earlier one to lanes of their own (a track's slices must nest,
    and calls run together are siblings, not one inside the other); the number of lanes used."""
    ends: list[int] = []  # per lane, where its last call ends
    for span in sorted((s for s in spans if s["cat"] == "tool"), key=lambda s: s["ts"]):
        lane = next((n for n, end in enumerate(ends) if end <= span["ts"]), len(ends))
        ends[lane:lane + 1] = [span["ts"] + span["dur"]]
        span["tid"] = tid if lane == 0 else tid * LANES + lane
    return max(1, len(ends))


def _rate_waits(waits: list[dict[str, Any]], tid: int, origin: float) -> list[dict[str, Any]]:
    return [_span(f"waiting for the rate limit ({wait.get('limit') or 'unknown'})", "rate_limit", wait["since"],
                  wait["until"], tid, origin, {"limit": wait.get("limit"), "cause": wait.get("cause"),
                                               "waited_s": round(wait["until"] - wait["since"], 3)})
            for wait in waits if wait.get("since") and wait.get("until")]


def _inner_spans(lines: list[dict[str, Any]], start: float, tid: int, origin: float) -> list[dict[str, Any]]:
    """A model request runs from the previous record to the reply's first assistant record (a
    reply is recorded a block a record); each of its tool calls from its assistant record to the
    user record with its result."""
    spans, previous, reply = [], start, None
    for index, line in enumerate(lines):
        if line.get("type") == "assistant":
            same_reply = reply is not None and reply == (line.get("message") or {}).get("id")
            reply = (line.get("message") or {}).get("id")
            if not same_reply:
                spans.append(_span("model request", "model", previous, line["timestamp"], tid, origin, {}))
            for call in _tool_calls(line):
                spans.append(_span(call["name"], "tool", line["timestamp"], _answered(lines, index, call["id"]), tid,
                                   origin, {"input": call["input"], "tool_use_id": call["id"]}))
        previous = line["timestamp"]
    return spans


def _answered(lines: list[dict[str, Any]], index: int, call_id: str) -> float:
    """When the call's result was recorded (else the next record's time)."""
    for line in lines[index + 1:]:
        content = (line.get("message") or {}).get("content")
        if line.get("type") == "user" and isinstance(content, list) and any(
                isinstance(b, dict) and b.get("tool_use_id") == call_id for b in content):
            return float(line["timestamp"])
    return float(lines[index + 1]["timestamp"] if index + 1 < len(lines) else lines[index]["timestamp"])


def _tool_calls(line: dict[str, Any]) -> list[dict[str, Any]]:
    content = (line.get("message") or {}).get("content") or []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]


def _span(name: str, cat: str, start: float, end: float, tid: int, origin: float, args: dict) -> dict[str, Any]:
    return {
        "ph": "X", "name": name, "cat": cat, "pid": PID, "tid": tid,
        "ts": _us(start, origin), "dur": max(1, _us(end, origin) - _us(start, origin)), "args": args,
    }


def _transcript(path: str | None) -> list[dict[str, Any]]:
    """The transcript's records, each with its ``timestamp`` in epoch seconds (records carry
    Claude Code's ISO 8601 string, or an older covey's number); records with no time are left out."""
    if not path or not Path(path).exists():
        return []
    timed = ((record_time_s(record), record) for record in read_transcript(Path(path)))
    return [{**record, "timestamp": time_s} for time_s, record in timed if time_s is not None]
