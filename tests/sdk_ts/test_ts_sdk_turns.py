"""The TypeScript SDK's ``query()`` against covey over a conversation: ``interrupt()`` during a slow
model call, the heartbeat of a long Agent call, ``continue`` from a transcript that has no record
(program.mjs, run by ``run_program``). They pass against Claude Code 2.1.337 too
(``COVEY_SDK_SUITE_CLI`` set to the Python SDK's ``_bundled/claude``).

The heartbeat test runs once (on the newest SDK). On covey the run's ``COVEY_TOOL_HEARTBEAT_MS``
makes the beat come after 1.5 s of a 4 s child; against Claude Code the child takes 35 s, past its 30 s."""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.sdk.conftest import REFERENCE_CLI
from tests.sdk.test_sdk_compat import last_user_text, said, tool_results
from tests.sdk_ts.conftest import TS_SDK_VERSION, sdk_version

pytestmark = [pytest.mark.ray, pytest.mark.npm]

SLOW_REPLY_S = 10.0
BEAT_S = 1.5 if not os.environ.get(REFERENCE_CLI) else 30.0
"""When the first heartbeat comes: covey's, set by the run's environment; Claude Code's 30 s."""
CHILD_S = BEAT_S + 2.5 if not os.environ.get(REFERENCE_CLI) else 35.0
"""How long the Agent call's child takes: past the first heartbeat."""


def _slow_then_after(asked: Any) -> Any:
    """The first prompt's model call takes ``SLOW_REPLY_S`` (``asked`` appears when it starts); the
    second prompt is answered at once."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        said = last_user_text(body)
        if "haiku" in body["model"]:  # Claude Code's own small-model requests
            return {"text": "t"}
        if "AFTER-41" in said:
            return {"text": "after the interrupt"}
        if "SLOW-41" in said:
            asked.touch()
            time.sleep(SLOW_REPLY_S)
            return {"text": "slow answer"}
        return {"text": "?"}

    return reply


def test_interrupt_during_a_model_call_runs_the_interrupt_hook_and_ends_the_turn(run_program, fake_api, tmp_path):
    """``interrupt()`` while the model call runs: the program's ``Interrupt`` hook callback gets Claude
    Code's input (``source: "user"``, ``reason: "stop"``, ``via: "client"``), the turn ends with an
    error result whose ``terminal_reason`` is ``aborted_streaming``, and the next prompt is answered."""
    asked = tmp_path / "slow-call-started"
    fake_api.replies = [_slow_then_after(asked)]
    # The slow reply is written to a connection the interrupted run closed: not worth a traceback.
    fake_api._server.handle_error = lambda request, address: None

    ran = run_program(["SLOW-41 take your time", "AFTER-41 still there?"], interrupt_when=asked)

    stopped, after = [message for message in ran.messages if message["type"] == "result"]
    assert (stopped["subtype"], stopped["is_error"], stopped["terminal_reason"]) == (
        "error_during_execution", True, "aborted_streaming"), stopped
    assert stopped.get("result") != "slow answer"
    assert (after["subtype"], after["result"], after["session_id"]) == ("success", "after the interrupt",
                                                                         stopped["session_id"]), after
    [hooked] = [entry["input"] for entry in ran.handled if entry.get("hook") == "Interrupt"]
    assert {key: hooked.get(key) for key in ("hook_event_name", "source", "reason", "via", "session_id")} == {
        "hook_event_name": "Interrupt", "source": "user", "reason": "stop", "via": "client",
        "session_id": stopped["session_id"]}, hooked
    assert hooked["cwd"] == str(tmp_path) and hooked["transcript_path"].endswith(f"{stopped['session_id']}.jsonl")
    assert [entry for entry in ran.handled if "interrupted" in entry]  # interrupt() was answered


def _delegates_a_long_child(body: dict[str, Any]) -> dict[str, Any]:
    """The main agent calls Agent (sync) once; the child answers after ``CHILD_S``; then the main ends."""
    if "haiku" in body["model"]:
        return {"text": "t"}
    if "toolu_long" in tool_results(body):
        return {"text": "parent done"}
    if "CHILD-41" in last_user_text(body):
        time.sleep(CHILD_S)
        return {"text": "child done"}
    call = {"description": "long child work", "prompt": "CHILD-41 take a while", "subagent_type": "general-purpose",
            "run_in_background": False}
    thinking = {"type": "thinking", "thinking": "Delegate.", "signature": "sig"}  # (Claude Code thinks by default)
    return {"content": [thinking, {"type": "tool_use", "id": "toolu_long", "name": "Agent", "input": call}]}


def test_a_long_agent_call_sends_heartbeats(run_program, fake_api, ts_sdk):
    """An Agent call whose child takes past the first heartbeat: the program sees a ``tool_progress``
    heartbeat (``heartbeat: true``, the seconds so far, the call's description) before the call's
    result, which shows the child's id as Claude Code does. On the newest SDK only."""
    if sdk_version(ts_sdk[1]) != TS_SDK_VERSION:
        pytest.skip(f"the heartbeat is checked once, on the TypeScript SDK {TS_SDK_VERSION}")
    fake_api.replies = [_delegates_a_long_child]

    ran = run_program("Delegate the long work.", extra_env={"COVEY_TOOL_HEARTBEAT_MS": str(int(BEAT_S * 1000))})

    beats = [message for message in ran.messages if message["type"] == "tool_progress" and message.get("heartbeat")]
    assert beats, [message["type"] for message in ran.messages]
    beat = beats[0]
    assert (beat["tool_name"], beat["description"]) == ("Agent", "long child work"), beat
    assert BEAT_S <= beat["elapsed_time_seconds"] < CHILD_S, beat
    assert "toolu_long" in (beat["tool_use_id"], beat.get("parent_tool_use_id")), beat
    # It comes while the call runs: before the call's result reaches the program.
    types = [(message["type"], json.dumps(message.get("message", {}).get("content"))) for message in ran.messages]
    answered = next(index for index, (kind, content) in enumerate(types) if kind == "user" and "toolu_long" in content
                    and "tool_result" in content)
    assert ran.messages.index(beat) < answered
    # The result names the child as Claude Code does: its id without "agent-" (Claude Code's have none).
    [started] = [message for message in ran.messages if message.get("subtype") == "task_started"]
    shown = started["task_id"].removeprefix("agent-")
    assert ran.messages[answered]["tool_use_result"]["agentId"] == shown
    [block] = ran.messages[answered]["message"]["content"]
    text = block["content"] if isinstance(block["content"], str) else "".join(part["text"] for part in block["content"])
    assert f"\nagentId: {shown}" in text and "agentId: agent-" not in text, text
    result = ran.messages[-1]
    assert (result["type"], result["subtype"], result["result"]) == ("result", "success", "parent done"), result
    if not os.environ.get(REFERENCE_CLI):
        assert beat["session_id"] == result["session_id"]


def _transcript_alone(config: Path, cwd: Path, word: str) -> str:
    """A conversation that left only its transcript, ``projects/<project>/<id>.jsonl`` in Claude
    Code's format (as Claude Code or a session store leaves one): no covey record beside it."""
    from covey.transcripts.session_files import project_folder
    from covey.transcripts.transcript import TranscriptWriter

    session_id = str(uuid.uuid4())
    writer = TranscriptWriter(project_folder(config, cwd) / f"{session_id}.jsonl", session_id=session_id,
                              agent_id="agent-main", cwd=cwd)

    async def write() -> None:
        await writer.append("user", {"role": "user", "content": f"REMEMBER-41 the word is {word}"})
        await writer.append("assistant", {"role": "assistant", "content": [{"type": "text", "text": f"noted: {word}"}]})

    asyncio.run(write())
    writer.close()
    return session_id


def _recalls(body: dict[str, Any]) -> dict[str, Any]:
    if "haiku" in body["model"]:
        return {"text": "t"}
    word = next((word for word in ("KIWI", "LIME") if said(body, "assistant", f"noted: {word}")), "nothing")
    return {"text": f"it was {word}"}


def test_continue_takes_the_directorys_latest_transcript_though_it_has_no_record(run_program, fake_api, served,
                                                                                 tmp_path):
    """``covey -p --continue`` and the SDK's ``continue: true`` continue the directory's most recent
    conversation when all it left is its transcript, under its id, as Claude Code does."""
    config = Path(served.env["HOME"]) / ".claude"
    fake_api.replies = [_recalls]
    kiwi = _transcript_alone(config, tmp_path, "KIWI")
    env = {"COVEY_NO_SERVICE": "0", "ANTHROPIC_BASE_URL": fake_api.url}
    printed = served.covey("--continue", "-p", "RECALL-41 the word?", "--output-format", "json", env=env, cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert {key: json.loads(printed.stdout)[key] for key in ("result", "session_id")} == {
        "result": "it was KIWI", "session_id": kiwi}

    lime = _transcript_alone(config, tmp_path, "LIME")  # written last: the one to continue now
    ran = run_program("RECALL-41 the word?", **{"continue": True})

    result = ran.messages[-1]
    assert (result["subtype"], result["result"], result["session_id"]) == ("success", "it was LIME", lime), result
    transcript = (config / "projects").glob(f"*/{lime}.jsonl")
    assert "RECALL-41" in next(transcript).read_text()  # the conversation went on in its own transcript
