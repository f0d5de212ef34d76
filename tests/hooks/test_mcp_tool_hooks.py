"""``mcp_tool`` hooks call a tool of an MCP server the agent is connected to, with ``${path}``
placeholders filled from the payload, and the tool's text decides as a command's stdout would
(Claude Code's handler type; covey skipped it before)."""

from __future__ import annotations

import json

from covey.agent.lifecycle import AgentServices, run_agent
from covey.definitions.definition import AgentDefinition
from covey.hooks.mcp_tool import fill
from covey.model.scripted import ScriptedModel
from covey.permissions.policy import PermissionPolicy
from covey.runtime.spec import AgentSpec, RunSettings
from tests.mcp.helpers import stdio

DENY = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                          "permissionDecisionReason": "the policy server said no"}})


def test_placeholders_are_filled_from_the_payload():
    payload = {"tool_name": "Read", "tool_input": {"file_path": "/a.py", "limit": 3}, "session_id": "s"}
    assert fill({"path": "${tool_input.file_path}", "n": "${tool_input.limit}", "what": "${tool_name} of ${session_id}",
                 "gone": "${tool_input.nope}", "list": ["${cwd}"], "k": 1}, payload) == {
        "path": "/a.py", "n": 3, "what": "Read of s", "gone": "", "list": [""], "k": 1}


async def test_a_pre_tool_use_mcp_tool_hook_denies_through_the_servers_answer(tmp_path):
    hooks = {"PreToolUse": [{"matcher": "Read", "hooks": [
        {"type": "mcp_tool", "server": "policy", "tool": "getenv", "input": {"name": "${tool_name}"}}]}]}
    spec = AgentSpec(
        session_id="s-mcp-hook", agent_id="a-1", definition=AgentDefinition(name="main", description="main"),
        prompt="go", model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=["Read"], max_turns=4,
        transcript_dir=str(tmp_path / "t"), permissions=PermissionPolicy(mode="bypassPermissions", project_root=tmp_path),
        settings=RunSettings(mcp_servers={"policy": stdio(env={"Read": DENY})}, hooks=hooks),
    )
    (tmp_path / "a.txt").write_text("secret")
    model = ScriptedModel.from_turns([{"tool_use": [{"name": "Read", "input": {"file_path": str(tmp_path / "a.txt")}}]},
                                      {"text": "done"}])
    events = [event async for event in run_agent(spec, AgentServices(model=model))]
    [block] = [b for e in events if getattr(e, "type", None) == "user" and isinstance(e.message.get("content"), list)
               for b in e.message["content"] if b.get("type") == "tool_result"]
    assert block["is_error"] and "the policy server said no" in str(block["content"])
    assert "secret" not in str(block["content"])
