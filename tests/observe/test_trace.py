"""The trace reads an agent's transcript times, in Claude Code's ISO format or an older covey's epoch seconds (no Ray)."""

from __future__ import annotations

import json
import os
import stat
from types import SimpleNamespace

from covey.observe.trace import trace_events, write_trace


def _record(output_file: str) -> SimpleNamespace:
    return SimpleNamespace(agent_type="general-purpose", member_name=None, agent_id="agent-a", description="probe",
                           output_file=output_file, started_at=1764500000.0, ended_at=1764500010.0,
                           status="completed", usage=SimpleNamespace(total=10), cost_usd=0.0)


def _write(path, records) -> str:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return str(path)


CALL = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}


def test_spans_take_their_times_from_iso_timestamps(tmp_path):
    path = _write(tmp_path / "a.jsonl", [
        {"type": "assistant", "timestamp": "2025-11-30T10:53:22.000Z", "message": CALL},  # 1764500002.0
        {"type": "user", "timestamp": "2025-11-30T10:53:23.500Z", "message": RESULT},
    ])
    (tool,) = [e for e in trace_events([_record(path)]) if e.get("cat") == "tool"]
    assert tool["name"] == "Read" and tool["dur"] == 1_500_000  # microseconds between the two records


def test_an_older_transcripts_epoch_seconds_give_the_same_spans(tmp_path):
    path = _write(tmp_path / "a.jsonl", [
        {"type": "assistant", "timestamp": 1764500002.0, "message": CALL},
        {"type": "user", "timestamp": 1764500003.5, "message": RESULT},
        {"type": "summary", "summary": "no time: left out"},
    ])
    (tool,) = [e for e in trace_events([_record(path)]) if e.get("cat") == "tool"]
    assert tool["dur"] == 1_500_000


def test_the_trace_file_is_0600_and_the_folders_made_for_it_0700(tmp_path):
    path = write_trace(tmp_path / "traces" / "run.json", [])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert json.loads(path.read_text())["traceEvents"] == []


def test_a_requests_wait_for_the_rate_limit_is_a_span_on_its_agents_track(tmp_path):
    record = _record(str(tmp_path / "none.jsonl"))
    record.rate_waits = [{"limit": "input_tokens", "cause": "queue", "since": 1764500001.0, "until": 1764500004.25}]
    events = trace_events([record])
    (wait,) = [e for e in events if e.get("cat") == "rate_limit"]
    (agent,) = [e for e in events if e.get("cat") == "agent"]
    assert wait["name"] == "waiting for the rate limit (input_tokens)" and wait["tid"] == agent["tid"]
    assert wait["dur"] == 3_250_000 and wait["args"] == {"limit": "input_tokens", "cause": "queue", "waited_s": 3.25}
    assert agent["ts"] <= wait["ts"] and wait["ts"] + wait["dur"] <= agent["ts"] + agent["dur"]


def test_a_reply_recorded_a_block_a_record_is_one_model_request(tmp_path):
    text = {"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": "Reading it."}]}
    path = _write(tmp_path / "a.jsonl", [
        {"type": "user", "timestamp": "2025-11-30T10:53:20.000Z", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "timestamp": "2025-11-30T10:53:22.000Z", "message": text},
        {"type": "assistant", "timestamp": "2025-11-30T10:53:22.010Z", "message": {**CALL, "id": "msg_1"}},
        {"type": "user", "timestamp": "2025-11-30T10:53:23.500Z", "message": RESULT},
    ])
    events = trace_events([_record(path)])
    (model,) = [e for e in events if e.get("cat") == "model"]
    (tool,) = [e for e in events if e.get("cat") == "tool"]
    assert model["dur"] == 2_000_000 and abs(tool["dur"] - 1_490_000) <= 1  # microseconds, rounded
