"""Lines the SDK's message types do not keep, read raw from covey's stdout as a program started
with claude-agent-sdk's command line gets them (and from Claude Code 2.1.337's with
``COVEY_SDK_SUITE_CLI``): ``--replay-user-messages``' echoes, and a failed ``--resume``'s
``startup_failure_reason``."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

pytestmark = pytest.mark.ray  # the covey service runs a Ray

STREAM = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
INITIALIZE = {"type": "control_request", "request_id": "init-1", "request": {"subtype": "initialize", "hooks": None}}
UNKNOWN = "9d3c2a8e-0000-4000-8000-000000000000"


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
