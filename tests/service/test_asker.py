"""The service-side asker: a permission prompt as a ``can_use_tool`` request, the answer back."""

from __future__ import annotations

import asyncio

from covey.client import ports as protocol
from covey.permissions.decisions import Allow, Deny, PermissionRequest
from covey.service.asker import ClientAsker, HookCaller, McpRelayClient, NoAnswer, from_response

REQUEST = PermissionRequest(tool_name="Bash", subject="npm publish", input={"command": "npm publish"},
                            message="Allow Bash (npm publish)?", reason="ask rule 'Bash'", suggested_rule="",
                            agent_id="agent-1")


async def test_a_prompt_becomes_can_use_tool_and_always_adds_the_suggested_rule():
    sent = []
    asker = ClientAsker(lambda message: _append(sent, message))
    asking = asyncio.create_task(asker(REQUEST))
    while not sent:
        await asyncio.sleep(0)
    request = sent[0]["request"]
    assert request["subtype"] == "can_use_tool" and request["tool_name"] == "Bash"
    assert request["input"] == {"command": "npm publish"} and request["agent_id"] == "agent-1"
    suggestion = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm publish"}],
                  "behavior": "allow", "destination": "session"}
    assert request["permission_suggestions"] == [suggestion] and request["suggested_rule"] == "Bash(npm publish)"
    asker.answered(protocol.success(sent[0]["request_id"], {"behavior": "allow", "updatedInput": {},
                                                             "updatedPermissions": [suggestion]}))
    answer = await asking
    assert isinstance(answer, Allow) and answer.add_allow_rules == ["Bash(npm publish)"]


async def test_a_client_that_leaves_denies_the_open_prompts():
    sent = []
    asker = ClientAsker(lambda message: _append(sent, message))
    asking = asyncio.create_task(asker(REQUEST))
    while not sent:
        await asyncio.sleep(0)
    asker.gone()
    answer = await asking
    assert isinstance(answer, Deny) and "gone" in answer.message


async def test_once_the_clients_input_ended_nothing_waits_for_an_answer():
    sent: list = []
    asker, hooks, mcp = (kind(lambda message: _append(sent, message)) for kind in (ClientAsker, HookCaller, McpRelayClient))
    for client in (asker, hooks, mcp):
        client.input_ended()

    denied = await asker(REQUEST)
    gate = await hooks("cb-1", {"hook_event_name": "PreToolUse", "tool_name": "Bash"}, "toolu_1")
    try:
        await hooks("cb-2", {"hook_event_name": "PostToolUse"}, "toolu_1")
        raise AssertionError("a PostToolUse callback nobody can answer should fail")
    except NoAnswer:
        pass
    try:
        await mcp("calc", {"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
        raise AssertionError("an MCP message nobody can answer should fail")
    except NoAnswer:
        pass

    assert isinstance(denied, Deny) and "input has ended" in denied.message
    assert gate["hookSpecificOutput"]["permissionDecision"] == "deny"  # the program's gate fails closed
    # The hooks were still shown to the program (it sees the calls); nothing else was sent.
    assert [m["request"]["subtype"] for m in sent] == ["hook_callback", "hook_callback"]


def test_answers_map_to_the_policys():
    assert from_response({"behavior": "allow", "updatedInput": {}}) is True
    assert from_response({"behavior": "deny", "message": ""}) is False  # a plain no, worded by the policy
    denied = from_response({"behavior": "deny", "message": "No terminal"})
    assert isinstance(denied, Deny) and denied.message == "No terminal"
    assert from_response({"behavior": "allow", "updatedPermissions": [
        {"type": "addRules", "rules": [{"toolName": "Read"}], "behavior": "allow"}]}).add_allow_rules == ["Read"]


async def _append(sent: list, message: dict) -> None:
    sent.append(message)
