"""A claude-agent-sdk program that keeps sessions itself (``session_store``: the SDK passes
``--session-mirror`` and stores each ``transcript_mirror`` entry) resumes one from its store: the
SDK writes the stored entries into a fresh ``CLAUDE_CONFIG_DIR`` (the main transcript, the
sub-agents' and their metadata, the program's ``settings.json``) and starts the CLI with
``--resume``; Claude Code resumes from the transcript alone under the same id (docs/sdk.md#session-store)."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest
from claude_agent_sdk import (
    AgentDefinition, InMemorySessionStore, ResultMessage, SystemMessage, project_key_for_directory, query,
)

from tests.sdk.test_sdk_compat import collect, said, tool_results, tool_use

pytestmark = pytest.mark.ray  # the covey service runs a Ray


@pytest.fixture(autouse=True)
def _everything_given_back(served):
    yield
    served.wait_all_given_back(timeout_s=30)


async def test_a_session_resumes_from_the_programs_store_alone_under_its_own_id(sdk_options, fake_api, tmp_path):
    fake_api.replies = [lambda body: {"text": "you said PEAR" if "STORE-2" in json.dumps(body["messages"])
                                      else "noted PEAR"}]
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"outputStyle": "Explanatory"}))
    store = InMemorySessionStore()
    options = sdk_options(session_store=store)
    options.env["CLAUDE_CONFIG_DIR"] = str(config)  # where the program keeps Claude Code's settings
    first = await collect(query(prompt="STORE-1 remember PEAR", options=options))
    session_id = first[-1].session_id
    assert isinstance(first[-1], ResultMessage) and first[-1].result == "noted PEAR", first
    shutil.rmtree(config / "projects")  # the store holds the session now, nothing on disk

    options = sdk_options(session_store=store, resume=session_id)
    options.env["CLAUDE_CONFIG_DIR"] = str(config)
    again = await collect(query(prompt="STORE-2 what did I say?", options=options))
    result = again[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success", again
    assert result.result == "you said PEAR" and result.session_id == session_id
    (init,) = [m for m in again if isinstance(m, SystemMessage) and m.subtype == "init"]
    assert init.data["session_id"] == session_id and init.data["output_style"] == "Explanatory"
    request = fake_api.requests[-1]
    assert said(request, "user", "STORE-1 remember PEAR") and said(request, "assistant", "noted PEAR")
    stored = await store.load({"project_key": project_key_for_directory(str(tmp_path)), "session_id": session_id})
    prompts = [e["message"]["content"] for e in stored or [] if e.get("type") == "user" and not e.get("isMeta")
               and isinstance(e.get("message", {}).get("content"), str)]
    assert prompts == ["STORE-1 remember PEAR", "STORE-2 what did I say?"], stored


async def test_a_sub_agents_metadata_reaches_the_store_at_its_start_and_finished(sdk_options, fake_api, tmp_path):
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if "HELPER-PROMPT-M" in json.dumps(body.get("system") or ""):
            return {"text": "helper found FIG"}
        if "toolu_agent_m" in tool_results(body):
            return {"text": "FINAL-M: FIG"}
        return tool_use("toolu_agent_m", "Agent", {"description": "find the fruit", "prompt": "CHILD-TASK-M",
                                                   "subagent_type": "helper", "run_in_background": False})

    fake_api.replies = [reply]
    store = InMemorySessionStore()
    options = sdk_options(session_store=store, agents={
        "helper": AgentDefinition(description="Looks things up", prompt="You are HELPER-PROMPT-M.", tools=["Read"])})
    options.env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "config")
    messages = await collect(query(prompt="MARK-M ask the helper", options=options))
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "FINAL-M: FIG", messages
    key = {"project_key": project_key_for_directory(str(tmp_path)), "session_id": messages[-1].session_id}
    (subpath,) = await store.list_subkeys(key)
    assert subpath.startswith("subagents/agent-")
    entries = await store.load({**key, "subpath": subpath}) or []
    metadata = [e for e in entries if e.get("type") == "agent_metadata"]
    assert len(metadata) == 2 and "finished" not in metadata[0] and metadata[1]["finished"] is True, metadata
    for meta in metadata:  # Claude Code's shape (it adds a few fields of its own)
        assert {key: meta.get(key) for key in ("agentType", "isBuiltIn", "description", "toolUseId", "spawnDepth",
                                               "requestShape")} == {
            "agentType": "helper", "isBuiltIn": False, "description": "find the fruit", "toolUseId": "toolu_agent_m",
            "spawnDepth": 1, "requestShape": "foreground"}, meta
    records = [e for e in entries if e.get("type") != "agent_metadata"]
    assert records and {e.get("agentId") for e in records} == {subpath.removeprefix("subagents/agent-")}

    # The store's session, its sub-agent's files among it, resumes (the SDK writes them all back).
    options = sdk_options(session_store=store, resume=key["session_id"])
    options.env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "config")
    fake_api.replies = [lambda body: {"text": "resumed FIG"}]
    again = await collect(query(prompt="and now?", options=options))
    assert isinstance(again[-1], ResultMessage) and again[-1].result == "resumed FIG", again
    assert again[-1].session_id == key["session_id"]
