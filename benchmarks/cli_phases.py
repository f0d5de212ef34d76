"""Where a fan-out child's time goes, from what a run leaves behind: the fake API's arrival time
of each request (wall clock) and each agent's transcript (each line's time, as covey wrote it).

Per child, the launch: the main agent's reply with the ``Agent`` calls recorded in its
transcript → the child's first transcript line (its run began: actor lent, spec arrived,
transcript opened) → its first request at the API. Per child turn, after the model's reply was
sent (arrival + the reply's delay): → the reply recorded in the transcript (its stream read and
parsed) → the tool results recorded (the tools) → the next request at the API (events shipped,
the request built and sent).
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

from covey.transcripts.transcript_read import record_time_s

MAIN_LABEL = "main"


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def _who(lines: list[dict[str, Any]], main_mark: str) -> str | None:
    text = json.dumps([line.get("message") for line in lines[:4]])
    if main_mark in text:
        return MAIN_LABEL
    found = re.search(r"CHILD-\d+", text)
    return found.group(0) if found else None


def quantiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {"n": len(ordered), "p50": round(statistics.median(ordered), 1),
            "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 1), "max": round(ordered[-1], 1)}


def _turns(lines: list[dict[str, Any]]) -> list[tuple[float | None, float | None]]:
    """Each model reply's time in the transcript, and the time of the tool results that follow it."""
    turns = []
    for index, line in enumerate(lines):
        if line.get("type") != "assistant":
            continue
        results = next((later for later in lines[index + 1:] if later.get("type") == "user"
                        and '"tool_result"' in json.dumps(later.get("message"))), None)
        if results is not None:
            turns.append((record_time_s(line), record_time_s(results)))
    return turns


def phases(session_dir: Path, arrivals: dict[str, list[float]], reply_delay_s: float, main_mark: str) -> dict[str, Any]:
    """``arrivals``: each agent's request arrival times (wall clock), ``main`` and ``CHILD-<i>``."""
    transcripts = {}
    for path in session_dir.glob("agent-*.jsonl"):
        lines = _lines(path)
        who = _who(lines, main_mark)
        if who is not None:
            transcripts[who] = [line for line in lines if line.get("type") in ("user", "assistant")]
    main = transcripts.pop(MAIN_LABEL, [])
    fanned = next((record_time_s(line) for line in main if line.get("type") == "assistant"
                   and '"Agent"' in json.dumps(line.get("message"))), None)
    launch: dict[str, list[float]] = {"reply_to_run_began_ms": [], "run_began_to_first_request_ms": []}
    turn: dict[str, list[float]] = {"reply_to_recorded_ms": [], "tools_ms": [], "recorded_to_next_request_ms": []}
    for who, lines in transcripts.items():
        times = [t for t in (record_time_s(line) for line in lines) if t is not None]
        sent = arrivals.get(who, [])
        if not times or not sent:
            continue
        if fanned is not None:
            launch["reply_to_run_began_ms"].append((times[0] - fanned) * 1000)
        launch["run_began_to_first_request_ms"].append((sent[0] - times[0]) * 1000)
        for k, (recorded, done) in enumerate(_turns(lines)):
            if recorded is None or done is None or k + 1 >= len(sent):
                continue
            turn["reply_to_recorded_ms"].append((recorded - sent[k] - reply_delay_s) * 1000)
            turn["tools_ms"].append((done - recorded) * 1000)
            turn["recorded_to_next_request_ms"].append((sent[k + 1] - done) * 1000)
    return {"children": len(transcripts), "launch": {k: quantiles(v) for k, v in launch.items()},
            "turn": {k: quantiles(v) for k, v in turn.items()}}
