"""Lines the SDK's message types do not keep, read raw from covey's stdout as a program started
with claude-agent-sdk's command line gets them (and from Claude Code 2.1.337's with
``COVEY_SDK_SUITE_CLI``): ``--replay-user-messages``' echoes, a failed ``--resume``'s
``startup_failure_reason``, and the ``session_state_changed`` lines the SDK asks for and keeps to itself."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

pytestmark = pytest.mark.ray  # the covey service runs a Ray

STREAM = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
INITIALIZE = {"type": "control_request", "request_id": "init-1", "request": {"subtype": "initialize", "hooks": None}}
UNKNOWN = "9d3c2a8e-0000-4000-8000-000000000000"
READS_STATE = "CLAUDE_CODE_SDK_READS_SESSION_STATE"


@pytest.fixture(autouse=True)
def _everything_given_back(served):
    yield
    served.wait_all_given_back(timeout_s=30)


def _run(cli: str, options: Any, argv: list[str], lines: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    """The CLI run with ``lines`` on stdin (then closed), as the SDK starts it: its exit code and stdout lines."""
    done = subprocess.run([cli, *STREAM, *argv], input="".join(json.dumps(line) + "\n" for line in lines),
                          capture_output=True, text=True, env=options.env, cwd=options.cwd, timeout=90)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_replayed_user_messages_come_back_after_the_turns_init(covey_cli, sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": "echoed"}]
    user = {"type": "user", "message": {"role": "user", "content": "say it back"}, "parent_tool_use_id": None,
            "session_id": "", "uuid": "11111111-2222-4333-8444-555555555555"}
    code, out = _run(covey_cli, sdk_options(), ["--replay-user-messages"], [INITIALIZE, user])
    kinds = [(line["type"], line.get("subtype")) for line in out if line["type"] in ("system", "user", "assistant")]
    assert code == 0 and kinds.index(("user", None)) == kinds.index(("system", "init")) + 1, kinds
    echo = next(line for line in out if line["type"] == "user")
    result = [line for line in out if line["type"] == "result"][-1]  # Claude Code's command_lifecycle lines follow
    assert echo["isReplay"] is True and echo["message"] == user["message"] and echo["uuid"] == user["uuid"]
    assert echo["parent_tool_use_id"] is None and echo["session_id"] == result["session_id"]
    assert result["result"] == "echoed"


def test_a_replayed_clear_comes_back_as_its_command_record_in_the_new_session(covey_cli, sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": "before"}]
    clear = {"type": "user", "message": {"role": "user", "content": "/clear"}, "parent_tool_use_id": None,
             "session_id": "", "uuid": "aaaaaaaa-2222-4333-8444-555555555555"}
    code, out = _run(covey_cli, sdk_options(), ["--replay-user-messages"], [INITIALIZE, clear])
    kinds = [line["type"] for line in out]
    echo = next(line for line in out if line["type"] == "user")
    result = [line for line in out if line["type"] == "result"][-1]
    assert code == 0 and kinds.index("conversation_reset") < kinds.index("user") < kinds.index("result"), kinds
    assert echo["message"]["content"] == ("<command-name>/clear</command-name>\n            <command-message>clear"
                                          "</command-message>\n            <command-args></command-args>")
    assert echo["uuid"] == clear["uuid"] and echo["isReplay"] is True and echo["session_id"] == result["session_id"]


def test_an_unknown_resume_fails_with_claude_codes_startup_reason(covey_cli, sdk_options):
    code, out = _run(covey_cli, sdk_options(), ["--resume", UNKNOWN], [INITIALIZE])
    result = [line for line in out if line["type"] == "result"][-1]
    assert code == 1 and result["type"] == "result" and result["is_error"] is True
    assert result["startup_failure_reason"] == "resume_target_not_found" and result["session_id"] == UNKNOWN
    assert UNKNOWN in result["errors"][0]


def _launches_a_helper(body: dict[str, Any]) -> dict[str, Any]:
    """The main agent starts a background helper and ends its turn; the helper answers; the
    notification's turn closes."""
    said = json.dumps(body["messages"])
    if "HELPER-9" in json.dumps(body.get("system", "")):
        return {"text": "helper done"}
    if "task-notification" in said:
        return {"text": "all done"}
    if "toolu_bg9" in said:
        return {"text": "launched"}
    return {"content": [{"type": "tool_use", "id": "toolu_bg9", "name": "Agent", "input": {
        "description": "help", "prompt": "help out", "subagent_type": "helper", "run_in_background": True}}]}


@pytest.mark.parametrize("asked", [True, False])
def test_the_session_is_running_until_its_last_turn_and_then_idle(covey_cli, sdk_options, fake_api, asked):
    fake_api.replies = [_launches_a_helper]
    options = sdk_options()
    options.env[READS_STATE] = "1" if asked else "0"
    helper = json.dumps({"helper": {"description": "helps", "prompt": "You are HELPER-9.", "tools": []}})
    user = {"type": "user", "message": {"role": "user", "content": "start the helper"}, "parent_tool_use_id": None,
            "session_id": ""}
    code, out = _run(covey_cli, options, ["--agents", helper], [INITIALIZE, user])
    marks = [line.get("state") or line.get("subtype") or line["type"] for line in out
             if line["type"] == "result" or line.get("subtype") in ("session_state_changed", "init")]
    assert code == 0 and marks.count("success") == 2, marks  # the prompt's turn, then the notification's
    if not asked:
        assert "running" not in marks and "idle" not in marks, marks
        return
    assert marks[0] == "running" and marks[-1] == "idle" and marks.count("idle") == 1, marks
    states = [line for line in out if line.get("subtype") == "session_state_changed"]
    assert all(line["sdk_host_only"] is True and line["session_id"] == out[-1]["session_id"] for line in states)
