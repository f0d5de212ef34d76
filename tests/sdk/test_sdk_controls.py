"""The SDK's control requests about the session, against covey as against Claude Code 2.1.337 (its
bundled CLI, with ``COVEY_SDK_SUITE_CLI``): ``get_context_usage``, ``rewind_files``,
``mcp_reconnect`` / ``mcp_toggle``, ``end_session``, and a subtype covey does not take. Every
request gets an answer: a success, or an error in Claude Code's words."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeSDKClient, ResultMessage

from tests.sdk.conftest import REFERENCE_CLI
from tests.sdk.test_sdk_compat import collect, requests_with

pytestmark = pytest.mark.ray  # the covey service runs a Ray

SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "server.py")


@pytest.fixture(autouse=True)
def _everything_given_back(served):
    yield
    served.wait_all_given_back(timeout_s=30)


async def _refused(client: ClaudeSDKClient, request: dict) -> str:
    with pytest.raises(Exception) as refused:
        await client._query._send_control_request(request)  # type: ignore[union-attr]
    return str(refused.value)


async def test_context_usage_and_a_rewind_without_checkpoints(sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": "counted", "usage": {"input_tokens": 40_000, "output_tokens": 7}}]
    async with ClaudeSDKClient(options=sdk_options(model="claude-sonnet-4-5")) as client:
        await client.query("hello")
        messages = await collect(client.receive_response())
        usage = await client.get_context_usage()
        not_enabled = await _refused(client, {"subtype": "rewind_files", "user_message_id": "u-1"})
        queued = await _refused(client, {"subtype": "update_queued_message", "uuid": "u-1", "content": "x"})
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "counted"
    names = [category["name"] for category in usage["categories"]]
    # The SDK's empty system prompt has no category of its own, in either.
    assert names[0] == "System tools" and "Messages" in names and names[-1] == "Free space", names
    assert usage["model"] == "claude-sonnet-4-5" and usage["maxTokens"] == usage["rawMaxTokens"] == 200_000
    assert 0 < usage["totalTokens"] <= usage["maxTokens"] and 0 <= usage["percentage"] <= 100
    assert usage["isAutoCompactEnabled"] is True and usage["autoCompactThreshold"] < usage["maxTokens"]
    assert usage["apiUsage"]["input_tokens"] == 40_000  # the last reply's, as the API counted it
    assert {"memoryFiles", "mcpTools", "agents", "gridRows"} <= set(usage)
    assert "File rewinding is not enabled." in not_enabled
    assert "Unsupported control request subtype: update_queued_message" in queued


@pytest.mark.skipif(bool(os.environ.get(REFERENCE_CLI)), reason="covey's own words: it has no file checkpoints")
async def test_a_rewind_with_checkpointing_says_covey_keeps_none(sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": "edited"}]
    async with ClaudeSDKClient(options=sdk_options(enable_file_checkpointing=True)) as client:
        await client.query("hello")
        await collect(client.receive_response())
        said = await _refused(client, {"subtype": "rewind_files", "user_message_id": "u-1"})
    assert "covey does not checkpoint files" in said


async def test_mcp_servers_are_toggled_and_reconnected(sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": "ok"}]
    servers = {"calc": {"command": sys.executable, "args": [SERVER]}}
    async with ClaudeSDKClient(options=sdk_options(mcp_servers=servers)) as client:
        assert "Server not found: nope" in await _refused(client, {"subtype": "mcp_reconnect", "serverName": "nope"})
        assert "Server not found: nope" in await _refused(
            client, {"subtype": "mcp_toggle", "serverName": "nope", "enabled": False})
        await client.reconnect_mcp_server("calc")
        await client.toggle_mcp_server("calc", False)
        off = {s["name"]: s for s in (await client.get_mcp_status())["mcpServers"]}
        said = await _refused(client, {"subtype": "mcp_reconnect", "serverName": "calc"})
        await client.query("turn with calc off")
        await collect(client.receive_response())
        await client.toggle_mcp_server("calc", True)
        on = {s["name"]: s for s in (await client.get_mcp_status())["mcpServers"]}
        await client.query("turn with calc on")
        await collect(client.receive_response())
    assert off["calc"]["status"] == "disabled" and not off["calc"].get("tools")
    assert said.startswith("MCP server calc is disabled")
    assert on["calc"]["status"] == "connected" and any(t["name"] == "add" for t in on["calc"]["tools"])
    # The turn after it was turned off has none of its tools; covey's next turn has them again
    # (Claude Code defers MCP tools behind its ToolSearch: not in the request's tools).
    assert not [t for t in requests_with(fake_api, "calc off")[0]["tools"] if t["name"].startswith("mcp__calc__")]
    if not os.environ.get(REFERENCE_CLI):
        assert "mcp__calc__add" in [t["name"] for t in requests_with(fake_api, "calc on")[0]["tools"]]


async def test_end_session_is_answered_and_ends_the_run(sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": "first"}]
    async with ClaudeSDKClient(options=sdk_options()) as client:
        await client.query("hello")
        await collect(client.receive_response())
        answer = await client._query._send_control_request({"subtype": "end_session"})  # type: ignore[union-attr]
        after = await collect(client.receive_messages())  # the run ends: the stream closes
    assert answer in ({}, None) and not any(isinstance(m, ResultMessage) for m in after)
