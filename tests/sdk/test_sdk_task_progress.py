"""A claude-agent-sdk program reads a background agent's progress (docs/subagents.md#progress-summaries):
``TaskProgressMessage`` after each of the child's replies that calls tools, and, with the
``agentProgressSummaries`` setting on, its progress summaries. The real SDK, unchanged, against
covey through its service and the fake Messages API."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest
from claude_agent_sdk import ResultMessage, TaskProgressMessage, query

from tests.sdk.conftest import REFERENCE_CLI
from tests.sdk.test_sdk_compat import collect, last_user_text, of_type, said, tool_results, tool_use, with_subtype

pytestmark = pytest.mark.ray  # the covey service runs a Ray


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    if "3 to 5 words" in last_user_text(body):  # a progress summary request
        return {"text": "Reading notes.txt"}
    if said(body, "user", "PROGRESS-CHILD"):  # the child's own request
        reads = json.dumps(body["messages"]).count('"tool_result"')
        time.sleep(0.4)  # time for summaries to fall due while the child works
        if reads < 2:
            return tool_use(f"toolu_read{reads}", "Read", {"file_path": "notes.txt"})
        return {"text": "the notes say hi"}
    if "task-notification" in last_user_text(body):
        return {"text": "FINAL-P: done"}
    if "toolu_agentp" in tool_results(body):
        return {"text": "the child is on it"}
    return tool_use("toolu_agentp", "Agent", {"description": "read the notes", "prompt": "PROGRESS-CHILD: read notes.txt twice",
                                              "subagent_type": "general-purpose", "run_in_background": True})


async def _run(sdk_options, fake_api, tmp_path, summaries: bool) -> tuple[list[Any], list[Any], list[Any]]:
    """The program's messages, its ``task_progress`` ones after a tool call, and those with a summary."""
    (tmp_path / "notes.txt").write_text("hi\n")
    fake_api.replies = [_reply]
    options = sdk_options(settings=json.dumps({"agentProgressSummaries": summaries}))
    options.env["COVEY_AGENT_PROGRESS_INTERVAL_MS"] = "150"
    messages = await collect(query(prompt="go", options=options))
    (started,) = with_subtype(messages, "task_started")
    progress = of_type(messages, TaskProgressMessage)
    for message in progress:
        assert message.task_id == started.data["task_id"] and message.tool_use_id == "toolu_agentp"
        assert message.data["run_id"] == started.data["run_id"]
        assert message.usage["total_tokens"] > 0 and message.session_id == started.data["session_id"]
    assert messages[-1] is of_type(messages, ResultMessage)[-1] and messages[-1].result == "FINAL-P: done"
    return messages, [m for m in progress if m.last_tool_name], [m for m in progress if m.data.get("summary")]


async def test_a_program_reads_a_background_agents_progress_after_each_tool_call(sdk_options, fake_api, tmp_path):
    """As Claude Code sends them without any option (``COVEY_SDK_SUITE_CLI`` checks this against it)."""
    _, tools, summaries = await _run(sdk_options, fake_api, tmp_path, summaries=False)
    assert [(m.last_tool_name, m.description) for m in tools] == [("Read", "Reading notes.txt")] * 2, tools
    assert [m.usage["tool_uses"] for m in tools] == [1, 2] and summaries == []
    assert not [body for body in fake_api.requests if "3 to 5 words" in last_user_text(body)]


@pytest.mark.skipif(bool(os.environ.get(REFERENCE_CLI)), reason="the Python SDK has no agentProgressSummaries for Claude Code")
async def test_with_the_setting_on_a_program_reads_progress_summaries(sdk_options, fake_api, tmp_path):
    _, tools, summaries = await _run(sdk_options, fake_api, tmp_path, summaries=True)
    assert len(tools) == 2
    assert summaries and all(m.data["summary"] == m.description == "Reading notes.txt" for m in summaries)
    assert all(m.last_tool_name is None for m in summaries)
