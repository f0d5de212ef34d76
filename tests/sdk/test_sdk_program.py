"""One claude-agent-sdk program that uses the options issue 27 names together, as a user writes it:
``output_format``, an in-process ``@tool`` server, ``max_thinking_tokens``, ``effort``, a hook that
returns ``continue: false``, ``/clear`` between two queries, and ``get_session_messages()`` after
the run. What it prints is checked against one expectation, which Claude Code 2.1.332 meets too
(``COVEY_SDK_SUITE_CLI`` set to the SDK's bundled ``claude``, the same fake API answering)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage, ClaudeSDKClient, ConversationResetMessage, HookMatcher, ResultMessage, create_sdk_mcp_server,
    get_session_messages, tool,
)

from tests.sdk.test_sdk_compat import collect, tool_results

pytestmark = pytest.mark.ray  # the covey service runs a Ray

SCHEMA = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
THINKING = {"type": "thinking", "thinking": "Add first.", "signature": "sig"}


@pytest.fixture(autouse=True)
def _everything_given_back(served):
    yield
    served.wait_all_given_back(timeout_s=30)


def _replies(body: dict[str, Any]) -> dict[str, Any]:
    """The first query: think, call the program's ``add``, answer in the schema. The second (after
    /clear) is stopped by the program's hook before any request."""
    if "haiku" in body["model"]:  # Claude Code's own small-model requests (a title, a summary)
        return {"text": "ok"}
    said = json.dumps(body["messages"])
    results = tool_results(body)
    if "look around" in said:
        return {"text": "the hook should have stopped this"}
    if "toolu_add" in results:
        return {"content": [{"type": "tool_use", "id": "toolu_out", "name": "StructuredOutput", "input": {"sum": 5}}]}
    return {"content": [THINKING, {"type": "text", "text": "Adding."},
                        {"type": "tool_use", "id": "toolu_add", "name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]}


async def _program(options: Any, cwd: Path) -> list[str]:
    """The user's program: what it prints, a line a thing."""
    printed, calls = [], []

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict) -> dict:
        calls.append(f"add({args['a']}, {args['b']})")
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    async def stop_looking(input_data: dict, tool_use_id: str | None, context: Any) -> dict:
        if "look around" in input_data.get("prompt", ""):
            return {"continue_": False, "stopReason": "enough for today"}
        return {}

    sessions = []
    async with ClaudeSDKClient(options=options(
            model="claude-opus-4-5", max_thinking_tokens=4000, effort="medium",
            output_format={"type": "json_schema", "schema": SCHEMA},
            mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])}, allowed_tools=["mcp__calc__add"],
            hooks={"UserPromptSubmit": [HookMatcher(hooks=[stop_looking])]})) as client:
        for prompt in ("Add 2 and 3.", "/clear", "look around"):
            await client.query(prompt)
            for message in await collect(client.receive_response()):
                if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                    printed.append("assistant " + " ".join(type(block).__name__ for block in message.content))
                elif isinstance(message, ConversationResetMessage):
                    printed.append("conversation reset")
                elif isinstance(message, ResultMessage):
                    sessions.append(message.session_id)
                    printed.append(f"result {message.subtype} {message.terminal_reason} "
                                   f"{json.dumps(message.structured_output)} {message.result!r} {message.num_turns}")
    printed.append("calls: " + " ".join(calls))
    for session_id in dict.fromkeys(sessions):
        kinds = [m.type for m in get_session_messages(session_id, directory=str(cwd))]
        printed.append(f"session {sessions.index(session_id)}: {' '.join(kinds)}")
    return printed


async def test_the_issues_program_prints_what_it_prints_on_claude_code(sdk_options, fake_api, served, tmp_path,
                                                                       monkeypatch):
    fake_api.replies = [_replies]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(Path(served.env["HOME"]) / ".claude"))

    printed = await _program(sdk_options, tmp_path)

    assert printed == [
        "assistant ThinkingBlock", "assistant TextBlock", "assistant ToolUseBlock", "assistant ToolUseBlock",
        """result success completed {"sum": 5} '{"sum":5}' 3""",
        "conversation reset", "result success None null '' 0",
        "result success None null 'Operation stopped by hook: enough for today' 0",
        "calls: add(2, 3)",
        # A record per block of each reply (Claude Code's), the prompts and the tool results.
        "session 0: user assistant assistant assistant user assistant user",
        "session 1: user user",  # the /clear command, then the prompt the hook stopped
    ], printed
