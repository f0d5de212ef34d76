"""The Chrome/Perfetto trace's layout, from records and transcripts written by hand (no Ray): calls
run side by side sit on lanes of their own, and an arrow goes from each Agent call to its child."""

from __future__ import annotations

import json

from covey.observe.trace import LANES, trace_events
from covey.runtime.records import RunRecord

T = 1_700_000_000.0


def _record(agent_id: str, started: float, ended: float, output_file=None, **fields) -> RunRecord:
    return RunRecord(agent_id=agent_id, owner_agent_id=None, parent_agent_id=fields.pop("parent", None), depth=0,
                     description=f"{agent_id} work", prompt="p", model="m", agent_type=fields.pop("type", "general-purpose"),
                     cwd="/", started_at=started, ended_at=ended, status="completed", output_file=output_file, **fields)


def _transcript(path, lines) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def _call(at: float, call_id: str, name: str = "Agent") -> dict:
    return {"type": "assistant", "timestamp": at, "message": {"id": "msg_1", "role": "assistant", "content": [
        {"type": "tool_use", "id": call_id, "name": name, "input": {"prompt": call_id}}]}}


def _results(at: float, *call_ids: str) -> dict:
    return {"type": "user", "timestamp": at, "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": "done"} for call_id in call_ids]}}


def _fan_out(tmp_path) -> list[dict]:
    """A main agent whose one reply made two Agent calls, answered together when both children ended."""
    main = _transcript(tmp_path / "main.jsonl", [
        {"type": "user", "timestamp": T + 0.1, "message": {"role": "user", "content": "go"}},
        _call(T + 1.0, "toolu_a"), _call(T + 1.01, "toolu_b"), _results(T + 3.0, "toolu_a", "toolu_b"),
        {"type": "assistant", "timestamp": T + 3.5, "message": {"id": "msg_2", "role": "assistant",
                                                               "content": [{"type": "text", "text": "both done"}]}},
    ])
    children = [_record(f"agent-{x}", T + 1.2, T + 2.5, parent="agent-main", tool_use_id=f"toolu_{x}") for x in "ab"]
    return trace_events([_record("agent-main", T, T + 3.6, main, type="main"), *children])


def test_calls_made_together_are_side_by_side_on_lanes_not_nested(tmp_path):
    events = _fan_out(tmp_path)
    calls = sorted((e for e in events if e.get("cat") == "tool"), key=lambda e: e["ts"])
    assert [c["args"]["tool_use_id"] for c in calls] == ["toolu_a", "toolu_b"]
    first, second = calls
    assert second["ts"] < first["ts"] + first["dur"]  # they overlap in time...
    assert first["tid"] == 1 and second["tid"] == 1 * LANES + 1  # ...so each has a track of its own
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names[1] == "main agent-main" and names[LANES + 1] == "main agent-main (side by side 2)"
    sort = {e["tid"]: e["args"]["sort_index"] for e in events if e["name"] == "thread_sort_index"}
    assert sort[1] < sort[LANES + 1] < sort[2]  # the lane sits right under its agent's track
    assert first["ts"] + first["dur"] == second["ts"] + second["dur"]  # each lasts until its result, recorded at T+3


def test_an_arrow_goes_from_each_agent_call_to_the_child_it_launched(tmp_path):
    events = _fan_out(tmp_path)
    calls = {e["args"]["tool_use_id"]: e for e in events if e.get("cat") == "tool"}
    agents = {e["args"]["agent_id"]: e for e in events if e.get("cat") == "agent"}
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == len(ends) == 2 and starts.keys() == ends.keys()
    for child, call_id in (("agent-a", "toolu_a"), ("agent-b", "toolu_b")):
        call, agent = calls[call_id], agents[child]
        (number,) = [n for n, s in starts.items() if s["tid"] == call["tid"]]
        start, end = starts[number], ends[number]
        assert call["ts"] < start["ts"] < call["ts"] + call["dur"]  # bound to the Agent call's slice
        assert end["tid"] == agent["tid"] and end["bp"] == "e"  # ends on the child's own span
        assert agent["ts"] <= end["ts"] < agent["ts"] + agent["dur"] and end["ts"] >= start["ts"]
        assert start["cat"] == end["cat"] == "spawn"


def test_calls_one_after_the_other_stay_on_the_agent_track(tmp_path):
    lines = [_call(T + 1.0, "toolu_1", "Read"), _results(T + 1.5, "toolu_1"),
             {**_call(T + 2.0, "toolu_2", "Read"), "message": {**_call(0, "toolu_2", "Read")["message"], "id": "msg_2"}},
             _results(T + 2.5, "toolu_2")]
    events = trace_events([_record("agent-main", T, T + 3, _transcript(tmp_path / "m.jsonl", lines), type="main")])
    assert {e["tid"] for e in events if e.get("cat") == "tool"} == {1}
    assert not [e for e in events if e["ph"] in ("s", "f")]
