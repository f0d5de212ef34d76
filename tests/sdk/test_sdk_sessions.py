"""claude-agent-sdk's session functions (``get_session_messages``, ``list_sessions``,
``list_subagents``, ``get_subagent_messages``) read the sessions a program ran through covey:
covey keeps them where Claude Code does (docs/resume.md#where-sessions-live)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AgentDefinition, ClaudeSDKClient, ResultMessage, get_session_messages, get_subagent_messages, list_sessions,
    list_subagents, query,
)

from tests.sdk.test_sdk_compat import collect, last_user_text, system_text, tool_results, tool_use

pytestmark = pytest.mark.ray  # the covey service runs a Ray


@pytest.fixture(autouse=True)
def _everything_given_back(served):
    yield
    served.wait_all_given_back(timeout_s=30)


def _texts(messages: list[Any]) -> list[str]:
    """Each message's text, its blocks joined (a prompt is a string, a reply a list of blocks)."""
    content = [m.message["content"] for m in messages]
    return [c if isinstance(c, str) else " ".join(b.get("text", "") for b in c if isinstance(b, dict))
            for c in content]


async def test_the_sdk_reads_a_session_and_its_sub_agent_run_through_covey(sdk_options, fake_api, served, tmp_path,
                                                                          monkeypatch):
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if "HELPER-PROMPT-S" in system_text(body):
            return {"text": "helper found PLUM"}
        if "toolu_agent_s" in tool_results(body):
            return {"text": "FINAL-S: the helper found PLUM"}
        if "MARK-S" in last_user_text(body):
            return tool_use("toolu_agent_s", "Agent", {
                "description": "find the fruit", "prompt": "CHILD-TASK-S: find the fruit", "subagent_type": "helper"})
        return {"text": "?"}

    fake_api.replies = [reply]
    helper = AgentDefinition(description="Looks things up", prompt="You are HELPER-PROMPT-S.", tools=["Read"])
    messages = await collect(query(prompt="MARK-S ask the helper", options=sdk_options(agents={"helper": helper})))
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "FINAL-S: the helper found PLUM", messages

    # The run's user is the served environment's HOME: its ~/.claude is where Claude Code keeps sessions.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(Path(served.env["HOME"]) / ".claude"))
    session = get_session_messages(result.session_id, directory=str(tmp_path))
    assert [m.type for m in session] == ["user", "assistant", "user", "assistant"], session
    texts = _texts(session)
    assert "MARK-S ask the helper" in texts[0] and texts[-1] == "FINAL-S: the helper found PLUM"
    assert session[1].message["content"][-1]["name"] == "Agent"
    (listed,) = list_sessions(directory=str(tmp_path))
    assert listed.session_id == result.session_id and listed.cwd == str(tmp_path)
    assert listed.first_prompt == "MARK-S ask the helper"  # the project context before it is meta
    (agent_id,) = list_subagents(result.session_id, directory=str(tmp_path))
    sub = get_subagent_messages(result.session_id, agent_id, directory=str(tmp_path))
    assert any("CHILD-TASK-S: find the fruit" in text for text in _texts(sub)), sub
    assert _texts(sub)[-1] == "helper found PLUM"
    assert {m.parent_tool_use_id for m in sub} == {"toolu_agent_s"}


async def test_a_programs_claude_config_dir_is_where_its_session_goes(sdk_options, fake_api, tmp_path, monkeypatch):
    fake_api.replies = [lambda body: {"text": "noted"}]
    options = sdk_options()
    options.env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "config")  # as a program isolates Claude Code's files
    messages = await collect(query(prompt="remember CONFIG-DIR-7", options=options))
    session_id = messages[-1].session_id

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    assert _texts(get_session_messages(session_id, directory=str(tmp_path))) == ["remember CONFIG-DIR-7", "noted"]
    assert [s.session_id for s in list_sessions()] == [session_id]


async def test_a_prompt_sent_right_after_a_result_is_stored_as_sent(sdk_options, fake_api, served, tmp_path,
                                                                    monkeypatch):
    # A background helper keeps the main agent running after its first result, so the next prompt
    # takes the queued-message path every time (it used to be stored as [{"type": "text", ...}]).
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if "HELPER-PROMPT-Q" in json.dumps(body.get("system") or ""):
            time.sleep(1.5)
            return {"text": "helper done"}
        if "toolu_agent_q" in tool_results(body):
            return {"text": "launched"}
        if "MARK-Q" in last_user_text(body):
            return tool_use("toolu_agent_q", "Agent", {"description": "wait a bit", "prompt": "CHILD-TASK-Q",
                                                       "subagent_type": "helper", "run_in_background": True})
        return {"text": "forgotten"}

    fake_api.replies = [reply]
    helper = AgentDefinition(description="Waits", prompt="You are HELPER-PROMPT-Q.", tools=["Read"])
    async with ClaudeSDKClient(options=sdk_options(agents={"helper": helper})) as client:
        await client.query("MARK-Q start the helper")
        first = (await collect(client.receive_response()))[-1]
        await client.query("now forget it")
        second = (await collect(client.receive_response()))[-1]
    assert isinstance(second, ResultMessage) and second.result == "forgotten", second

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(Path(served.env["HOME"]) / ".claude"))
    sent = [m.message["content"] for m in get_session_messages(first.session_id, directory=str(tmp_path))
            if m.type == "user" and "now forget it" in json.dumps(m.message["content"])]
    assert sent == ["now forget it"]
