"""The TypeScript SDK's ``query()``, unchanged, against covey: ``pathToClaudeCodeExecutable`` is
covey's executable, and the program (program.mjs) runs in node with an in-process MCP tool
(``tool()`` + ``createSdkMcpServer``) whose handler, like its hook callbacks, runs in node.

covey reaches the test's fake Messages API through the session's covey service, as in
tests/sdk; ``COVEY_SDK_SUITE_CLI`` runs the same programs against a Claude Code executable
(the TypeScript SDK's own: ``@anthropic-ai/claude-agent-sdk-linux-x64/claude``, or the Python
SDK's ``_bundled/claude``: 2.1.337 with claude-agent-sdk 0.2.190).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.sdk.conftest import REFERENCE_CLI
from tests.sdk.test_sdk_compat import system_text, tool_results

pytestmark = [pytest.mark.ray, pytest.mark.npm]  # the covey service runs a Ray; the SDK comes from npm

SCHEMA = {"type": "object", "properties": {"sum": {"type": "integer"}, "tool_said": {"type": "string"}},
          "required": ["sum", "tool_said"]}


def _adds_then_answers(body: dict[str, Any]) -> dict[str, Any]:
    """Thinks, calls the program's tool, then gives the schema's answer with what the tool said."""
    if "haiku" in body["model"]:  # Claude Code's own small-model requests (a title, a summary)
        return {"text": "adding"}
    thinking = {"type": "thinking", "thinking": "Add, then answer.", "signature": "sig"}
    results = tool_results(body)
    if "toolu_add" in results:
        content = results["toolu_add"]["content"]
        text = content if isinstance(content, str) else "".join(block.get("text", "") for block in content)
        said = re.search(r"sum=(\d+)", text)  # (Claude Code appends a reminder of the tokens left)
        answer = {"sum": int(said[1]), "tool_said": said[0]} if said else {"sum": -1, "tool_said": text}
        return {"content": [thinking, {"type": "tool_use", "id": "toolu_out", "name": "StructuredOutput", "input": answer}]}
    return {"content": [thinking, {"type": "tool_use", "id": "toolu_add", "name": "mcp__calc__add",
                                   "input": {"a": 2, "b": 3}}]}


def test_an_in_process_tool_structured_output_a_thinking_budget_and_hooks(run_program, fake_api):
    fake_api.replies = [_adds_then_answers]

    ran = run_program("Add 2 and 3 with the tool.", outputFormat={"type": "json_schema", "schema": SCHEMA},
                      maxThinkingTokens=4000)

    init, result = ran.messages[0], ran.messages[-1]
    assert (init["type"], init["subtype"]) == ("system", "init"), ran.messages
    assert {"name": "calc", "status": "connected", "source": "sdk"} in init["mcp_servers"], init["mcp_servers"]
    assert "mcp__calc__add" in init["tools"]
    assert (result["type"], result["subtype"], result["is_error"]) == ("result", "success", False), result
    assert result["structured_output"] == {"sum": 5, "tool_said": "sum=5"}  # the handler's answer reached the model
    assert result["session_id"] == init["session_id"]

    # The handlers ran in the node process: the tool once, each hook with its payload.
    assert {entry["pid"] for entry in ran.handled} == {ran.pid}
    assert [entry["args"] for entry in ran.handled if entry.get("tool") == "add"] == [{"a": 2, "b": 3}]
    [prompted] = [entry for entry in ran.handled if entry.get("hook") == "UserPromptSubmit"]
    assert prompted["prompt"] == "Add 2 and 3 with the tool."
    [pre] = [entry for entry in ran.handled if entry.get("hook") == "PreToolUse"]
    assert (pre["tool_name"], pre["tool_input"], pre["tool_use_id"]) == ("mcp__calc__add", {"a": 2, "b": 3}, "toolu_add")

    asked = [body for body in fake_api.requests if "haiku" not in body["model"]]
    assert len(asked) == 2, [body["messages"][-1] for body in asked]
    first = asked[0]
    assert {k: first["thinking"][k] for k in ("type", "budget_tokens")} == {"type": "enabled", "budget_tokens": 4000}
    tools = {tool["name"]: tool for tool in first["tools"]}
    assert tools["StructuredOutput"]["input_schema"] == SCHEMA
    if not os.environ.get(REFERENCE_CLI):  # (Claude Code defers MCP tools behind its ToolSearch)
        assert "mcp__calc__add" in tools
    assert "CONTEXT FROM THE TS HOOK" in json.dumps(first["messages"])  # the UserPromptSubmit hook's answer
    if not os.environ.get(REFERENCE_CLI):  # no systemPrompt: the SDK asks for none ([""]), as Python's --system-prompt ""
        assert "You are covey" not in system_text(first)


def test_its_own_system_prompt_and_bypass_permissions(run_program, fake_api, tmp_path):
    """The TypeScript SDK sends systemPrompt in ``initialize`` and bypassPermissions with
    ``--allow-dangerously-skip-permissions``: the model reads the prompt, and Write runs unasked."""
    target = tmp_path / "written.txt"

    def writes(body: dict[str, Any]) -> dict[str, Any]:
        if "haiku" in body["model"]:
            return {"text": "writing"}
        if tool_results(body):
            return {"text": "written"}
        thinking = {"type": "thinking", "thinking": "Write it.", "signature": "sig"}  # (Claude Code thinks by default)
        return {"content": [thinking, {"type": "tool_use", "id": "toolu_w", "name": "Write",
                                       "input": {"file_path": str(target), "content": "from the TS SDK\n"}}]}

    fake_api.replies = [writes]
    ran = run_program("Write the file.", systemPrompt="You are the TS test's agent.", permissionMode="bypassPermissions",
                      allowDangerouslySkipPermissions=True)

    init, result = ran.messages[0], ran.messages[-1]
    assert init["permissionMode"] == "bypassPermissions"
    assert (result["subtype"], result["result"], result["permission_denials"]) == ("success", "written", [])
    assert target.read_text() == "from the TS SDK\n"
    first = next(body for body in fake_api.requests if "haiku" not in body["model"])
    assert "You are the TS test's agent." in system_text(first)


def _bash_then_done(body: dict[str, Any]) -> dict[str, Any]:
    """Calls Bash once, then ends; Claude Code's own small-model requests get a word."""
    if "haiku" in body["model"]:
        return {"text": "bash"}
    if tool_results(body):
        return {"text": "done"}
    thinking = {"type": "thinking", "thinking": "Run it.", "signature": "sig"}
    return {"content": [thinking, {"type": "tool_use", "id": "toolu_b", "name": "Bash",
                                   "input": {"command": "echo hi", "description": "say hi"}}]}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_options_the_sdk_sends_in_initialize_and_its_own_flags(run_program, fake_api, served, tmp_path):
    """``settings`` / ``disallowedTools`` / ``managedSettings`` delivered in ``initialize`` (the SDK then
    passes ``--await-initialize --initialize-fields=settings,disallowedTools --managed-settings-in-initialize``
    and ends the session unless the answer confirms each), with ``persistSession: false``, a
    ``debugFile``, a plugin without its MCP servers and a ``projectConfigRoot``."""
    from covey.transcripts.session_files import project_name

    root = tmp_path / "checkout"
    _write(root / ".claude/agents/from-root.md", "---\nname: from-root\ndescription: the checkout's\n---\nHi.\n")
    plugin = tmp_path / "kit"
    _write(plugin / ".claude-plugin/plugin.json", json.dumps({"name": "kit"}))
    _write(plugin / "agents/helper.md", "---\nname: helper\ndescription: helps\n---\nHelp.\n")
    debug = tmp_path / "logs" / "debug.txt"
    fake_api.replies = [_bash_then_done]

    ran = run_program(
        "Run echo.", settings={"outputStyle": "Concise"}, settingsDelivery="initialize",
        disallowedTools=["WebFetch"], disallowedToolsDelivery="initialize",
        managedSettings={"permissions": {"deny": ["Bash"]}, "model": "claude-haiku-4-5"},
        managedSettingsDelivery="initialize", persistSession=False, debugFile=str(debug),
        plugins=[{"type": "local", "path": str(plugin), "skipMcpDiscovery": True}], projectConfigRoot=str(root))

    init, result = ran.messages[0], ran.messages[-1]
    assert init["output_style"] == "Concise" and (result["subtype"], result["result"]) == ("success", "done"), result
    asked = [body for body in fake_api.requests if "haiku" not in body["model"]]
    assert asked and all(body["model"] == "claude-opus-4-5" for body in asked)  # the managed model: not restrictive
    assert "WebFetch" not in {tool["name"] for tool in asked[0]["tools"]}
    bash = tool_results(asked[-1])["toolu_b"]
    assert bash.get("is_error") and "Bash" in json.dumps(bash["content"])  # the managed deny rule
    if not os.environ.get(REFERENCE_CLI):  # (the agents and plugins Claude Code lists differ)
        assert {"from-root", "kit:helper"} <= set(init["agents"]), init["agents"]
        assert "kit" in [entry["name"] for entry in init["plugins"]]
        assert "says: done" in debug.read_text()
    assert debug.is_file()
    sessions = Path(served.env["HOME"]) / ".claude" / "projects" / project_name(tmp_path)
    assert not list(sessions.glob(f"{init['session_id']}*")), list(sessions.iterdir())  # nothing kept
