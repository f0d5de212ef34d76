from pathlib import Path

from anthropic.types import ToolUseBlock

from covey.hooks import HookRegistry
from covey.hooks.tool_gate import hook_after, hook_gate
from covey.loop.execute import ToolExecutor
from covey.loop.gate import PermissionGate
from covey.permissions.policy import PermissionPolicy
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult
from tests.hooks.scripts import answer, exit_with, pre


class EchoInput(ToolInput):
    text: str
    loud: bool = False


class Echo(Tool):
    name = "Echo"
    description = "Echoes."
    input_model = EchoInput

    def __init__(self) -> None:
        self.seen: list[EchoInput] = []

    async def run(self, input: EchoInput, ctx: ToolContext) -> ToolResult:
        self.seen.append(input)
        return ToolResult(content=input.text.upper() if input.loud else input.text)


async def _call(tmp_path: Path, hooks, *, inner=None, text="hi"):
    registry = HookRegistry(hooks, project_dir=tmp_path)
    tool = Echo()
    ctx = ToolContext(agent_id="agent-a", cwd=tmp_path)
    executor = ToolExecutor([tool], ctx, gate=hook_gate(registry, inner), after=hook_after(registry))
    block = await executor.run_one(ToolUseBlock(type="tool_use", id="toolu_1", name="Echo", input={"text": text}))
    return block, tool


def _specific(**fields):
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}}


def _policy(tmp_path: Path, mode: str, answer_value=None) -> PermissionPolicy:
    async def asker(request):
        return answer_value
    return PermissionPolicy(mode=mode, project_root=tmp_path, asker=asker if answer_value is not None else None)


async def test_exit_2_block_reaches_the_model(tmp_path):
    block, tool = await _call(tmp_path, pre("Echo", exit_with(tmp_path, "no", 2, "echo is disabled today")))
    assert block["is_error"] and "blocked by a PreToolUse hook" in block["content"]
    assert "echo is disabled today" in block["content"] and tool.seen == []


async def test_deny_blocks(tmp_path):
    hook = answer(tmp_path, "deny", _specific(permissionDecision="deny", permissionDecisionReason="not here"))
    block, tool = await _call(tmp_path, pre("*", hook))
    assert block["is_error"] and "not here" in block["content"] and tool.seen == []


async def test_updated_input_is_validated_and_used(tmp_path):
    hook = answer(tmp_path, "loud", _specific(updatedInput={"loud": True}))
    block, tool = await _call(tmp_path, pre("Echo", hook))
    assert block["content"] == "HI" and tool.seen == [EchoInput(text="hi", loud=True)]


async def test_invalid_updated_input_is_an_error(tmp_path):
    hook = answer(tmp_path, "bad", _specific(updatedInput={"volume": 11}))
    block, tool = await _call(tmp_path, pre("Echo", hook))
    assert block["is_error"] and "invalid" in block["content"] and tool.seen == []


async def test_non_blocking_error_lets_the_call_run(tmp_path):
    block, tool = await _call(tmp_path, pre("Echo", exit_with(tmp_path, "crash", 1, "oops")))
    assert block == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hi"}


async def test_allow_skips_the_permission_gate(tmp_path):
    gate = PermissionGate(_policy(tmp_path, "default"))  # nobody to ask: Echo would be denied
    block, _ = await _call(tmp_path, {}, inner=gate)
    assert block["is_error"]
    hook = answer(tmp_path, "allow", _specific(permissionDecision="allow"))
    block, tool = await _call(tmp_path, pre("Echo", hook), inner=gate)
    assert block["content"] == "hi" and len(tool.seen) == 1


async def test_ask_goes_to_a_person_even_when_the_mode_allows(tmp_path):
    hook = answer(tmp_path, "ask", _specific(permissionDecision="ask", permissionDecisionReason="sure?"))
    gate = PermissionGate(_policy(tmp_path, "bypassPermissions", answer_value=False))
    block, tool = await _call(tmp_path, pre("Echo", hook), inner=gate)
    assert block["is_error"] and tool.seen == [] and gate.denials[0]["tool_name"] == "Echo"
    gate = PermissionGate(_policy(tmp_path, "bypassPermissions", answer_value=True))
    block, tool = await _call(tmp_path, pre("Echo", hook), inner=gate)
    assert block["content"] == "hi"


async def test_post_tool_use_block_reason_is_appended(tmp_path):
    hook = answer(tmp_path, "lint", {"decision": "block", "reason": "lint failed: line 3"})
    hooks = {"PostToolUse": [{"matcher": "Echo", "hooks": [{"type": "command", "command": hook}]}]}
    block, _ = await _call(tmp_path, hooks)
    assert block["content"].startswith("hi\n\n") and "lint failed: line 3" in block["content"]


async def test_post_tool_use_additional_context_is_appended(tmp_path):
    reply = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "formatted"}}
    hooks = {"PostToolUse": [{"hooks": [{"type": "command", "command": answer(tmp_path, "ctx", reply)}]}]}
    block, _ = await _call(tmp_path, hooks)
    assert block["content"] == "hi\n\nformatted"


async def test_pre_tool_use_additional_context_comes_with_the_result(tmp_path):
    hook = answer(tmp_path, "ctx", _specific(additionalContext="this repo uses tabs"))
    block, tool = await _call(tmp_path, pre("Echo", hook))
    assert block["content"] == "hi\n\nthis repo uses tabs" and len(tool.seen) == 1


async def test_a_hooks_ask_goes_through_permission_request_hooks_first(tmp_path):
    from covey.hooks.tool_gate import permission_request_hook

    ask = answer(tmp_path, "ask", _specific(permissionDecision="ask"))
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    hooks = {**pre("Echo", ask), "PermissionRequest": [{"hooks": [{"type": "command", "command": answer(tmp_path, "ok", allow)}]}]}
    policy = _policy(tmp_path, "default")  # nobody to ask
    registry = HookRegistry(hooks, project_dir=tmp_path)
    gate = PermissionGate(policy, on_request=permission_request_hook(registry, policy))
    tool = Echo()
    executor = ToolExecutor([tool], ToolContext(agent_id="a", cwd=tmp_path), gate=hook_gate(registry, gate))
    block = await executor.run_one(ToolUseBlock(type="tool_use", id="toolu_1", name="Echo", input={"text": "hi"}))
    assert block["content"] == "hi" and len(tool.seen) == 1


async def test_permission_request_allow_can_add_a_session_rule(tmp_path):
    from covey.hooks.tool_gate import permission_request_hook

    update = {"type": "addRules", "rules": [{"toolName": "Echo"}], "behavior": "allow", "destination": "session"}
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                    "decision": {"behavior": "allow", "updatedPermissions": [update]}}}
    hooks = {"PermissionRequest": [{"hooks": [{"type": "command", "command": answer(tmp_path, "ok", allow)}]}]}
    policy = _policy(tmp_path, "default")
    registry = HookRegistry(hooks, project_dir=tmp_path)
    gate = PermissionGate(policy, on_request=permission_request_hook(registry, policy))
    block, _ = await _call(tmp_path, {}, inner=gate)
    assert block["content"] == "hi"
    assert [r.text for r in policy.rules["allow"]] == ["Echo"]  # later calls are allowed by the rule
