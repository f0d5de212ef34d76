"""A served run's journal: numbered lines, kept in memory and in the session's file, questions answered
left out of what a later reader gets, and a reader that follows gets each line once."""

from __future__ import annotations

import asyncio
import json
import stat

from covey.client import ports as protocol
from covey.service.journal import RunLog, all_meta, read_lines, read_meta

SESSION = "0b9c9a40-0000-4000-8000-000000000001"


def test_the_file_starts_once_the_run_names_its_session_with_every_line_said_before(tmp_path):
    journal = RunLog({"cwd": "/p", "output_format": "stream-json"}, tmp_path)
    journal.add(protocol.stderr_line("covey: a warning"))
    assert not list(tmp_path.glob("*.jsonl"))
    journal.add(protocol.success("req_1", {"session_id": SESSION}))
    journal.add({"type": "result", "subtype": "success", "uuid": "u1"})
    lines = (tmp_path / f"{SESSION}.jsonl").read_bytes().splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["covey_stderr", "control_response", "result"]
    assert stat.S_IMODE((tmp_path / f"{SESSION}.jsonl").stat().st_mode) == 0o600
    assert read_meta(SESSION, tmp_path)["status"] == "running"


def test_an_answered_question_is_not_replayed_and_the_end_is_recorded(tmp_path):
    journal = RunLog({"cwd": "/p"}, tmp_path)
    journal.add(protocol.success("req_1", {"session_id": SESSION}))
    journal.add(protocol.control_request("can_use_tool", "ask_1", tool_name="Bash"))
    journal.add(protocol.control_request("can_use_tool", "ask_2", tool_name="Write"))
    journal.answer("ask_1")
    asked = [json.loads(line).get("request_id") for line in journal.since(-1)]
    assert "ask_1" not in asked and "ask_2" in asked
    journal.add({"type": protocol.DONE})
    meta = read_meta(SESSION, tmp_path)
    assert meta["status"] == "finished" and meta["answered"] == ["ask_1"] and meta["ended_at"] >= meta["started_at"]
    from_file = [json.loads(line).get("request_id") for line in read_lines(SESSION, tmp_path)]
    assert "ask_1" not in from_file and "ask_2" in from_file
    assert [m["session_id"] for m in all_meta(tmp_path)] == [SESSION]


def test_an_interrupted_or_failed_run_is_recorded_so(tmp_path):
    for done, status in (({"type": protocol.DONE, "interrupted": True}, "interrupted"),
                         ({"type": protocol.DONE, "error": "boom"}, "failed")):
        journal = RunLog({}, tmp_path)
        journal.add(protocol.success("r", {"session_id": SESSION}))
        journal.add(done)
        assert read_meta(SESSION, tmp_path)["status"] == status


async def test_a_follower_gets_every_line_once_in_batches_until_the_end(tmp_path):
    journal = RunLog({}, tmp_path)
    journal.add(protocol.success("r", {"session_id": SESSION}))
    got: list[bytes] = []
    lasts: list[int] = []

    async def follow(after: int) -> None:
        async for last, lines in journal.batches(after):
            lasts.append(last)
            got.extend(lines)

    reader = asyncio.create_task(follow(-1))
    await asyncio.sleep(0.01)
    for n in range(3):
        journal.add({"type": "assistant", "uuid": f"u{n}"})
        await asyncio.sleep(0)
    journal.add({"type": protocol.DONE})
    await asyncio.wait_for(reader, 5)
    assert [json.loads(line)["type"] for line in got] == ["control_response"] + ["assistant"] * 3 + [protocol.DONE]
    assert lasts[-1] == 4
    late: list[bytes] = []
    async for _last, lines in journal.batches(2):  # a reader that comes back after line 2
        late.extend(lines)
    assert [json.loads(line).get("uuid") for line in late] == ["u2", None]


def test_a_run_without_session_persistence_leaves_no_file_and_is_still_followed(tmp_path):
    journal = RunLog({"cwd": "/p", "persist": False}, tmp_path)
    journal.add(protocol.success("req_1", {"session_id": SESSION}))
    journal.add({"type": protocol.DONE})
    assert list(tmp_path.iterdir()) == [] and read_meta(SESSION, tmp_path) is None
    assert len(journal.since(-1)) == 2 and journal.done


def test_the_questions_still_open_are_listed_with_their_words(tmp_path):
    journal = RunLog({"cwd": "/p"}, tmp_path)
    journal.add(protocol.success("req_1", {"session_id": SESSION}))
    journal.add(protocol.control_request("can_use_tool", "ask_1", tool_name="Bash", message="Allow Bash (ls)?",
                                                 input={"command": "ls"}))
    journal.add(protocol.control_request("can_use_tool", "ask_2", tool_name="Write", message="Allow Write?"))
    journal.answer("ask_2")
    assert journal.waiting() == [{"request_id": "ask_1", "subtype": "can_use_tool", "tool_name": "Bash",
                                  "message": "Allow Bash (ls)?", "input": {"command": "ls"}}]
    journal.answer("ask_1")
    assert journal.waiting() == []


def test_a_detached_run_that_would_keep_no_files_is_refused_in_one_line():
    from covey.service.relay import detach_refusal

    kept = {"run": {"detach": True}, "options": {}}
    assert detach_refusal(kept) is None
    assert detach_refusal({"run": {}, "options": {"session_persistence": False}}) is None
    refused = detach_refusal({"run": {"detach": True}, "options": {"session_persistence": False}})
    assert refused is not None and "--no-session-persistence" in refused and "\n" not in refused
