"""The TypeScript SDK's ``agentProgressSummaries`` option, unchanged, against covey: the program's
``initialize`` turns progress summaries on (docs/subagents.md#progress-summaries), and its
``query()`` yields ``task_progress`` messages for a background agent: one after each of its
replies that calls tools, and its summaries."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from tests.sdk.conftest import REFERENCE_CLI
from tests.sdk.test_sdk_compat import last_user_text, said, tool_results, tool_use

pytestmark = [pytest.mark.ray, pytest.mark.npm]


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    if "haiku" in body["model"]:  # Claude Code's own small-model requests
        return {"text": "reading"}
    if "3 to 5 words" in last_user_text(body) or "present tense" in last_user_text(body):
        return {"text": "Reading notes.txt"}
    if said(body, "user", "TS-CHILD"):
        reads = json.dumps(body["messages"]).count('"tool_result"')
        time.sleep(0.4)
        if reads < 2:
            return tool_use(f"toolu_read{reads}", "Read", {"file_path": "notes.txt"})
        return {"text": "the notes say hi"}
    if "task-notification" in last_user_text(body):
        return {"text": "TS-FINAL"}
    if "toolu_agentts" in tool_results(body):
        return {"text": "waiting"}
    return tool_use("toolu_agentts", "Agent", {"description": "read the notes", "prompt": "TS-CHILD: read notes.txt twice",
                                               "subagent_type": "general-purpose", "run_in_background": True})


@pytest.mark.skipif(bool(os.environ.get(REFERENCE_CLI)), reason="Claude Code's summaries come every 30 s")
def test_the_programs_option_turns_summaries_on(run_program, fake_api, tmp_path):  # noqa: F811
    (tmp_path / "notes.txt").write_text("hi\n")
    fake_api.replies = [_reply]
    ran = run_program("go", agentProgressSummaries=True, allowedTools=["Read"],
                      settings={"env": {"COVEY_AGENT_PROGRESS_INTERVAL_MS": "150"}})
    progress = [m for m in ran.messages if m.get("subtype") == "task_progress"]
    assert [m["last_tool_name"] for m in progress if m.get("last_tool_name")] == ["Read", "Read"], progress
    assert any(m.get("summary") == "Reading notes.txt" for m in progress), progress
    assert ran.messages[-1]["type"] == "result" and ran.messages[-1]["result"] == "TS-FINAL"
