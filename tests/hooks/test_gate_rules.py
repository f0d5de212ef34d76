"""A PreToolUse hook's ``allow`` answers what the mode would have asked, never a deny or ask rule
(managed ones included); ``disableBypassPermissionsMode`` reaches the gate and PermissionRequest hooks."""

from __future__ import annotations

from covey.hooks import HookRegistry
from covey.hooks.tool_gate import permission_request_hook
from covey.loop.gate import PermissionGate
from covey.permissions.policy import PermissionPolicy
from covey.permissions.rules import parse_rule
from tests.hooks.scripts import answer, pre
from tests.hooks.test_gate import Echo, _call, _specific

MANAGED = "policySettings:/etc/claude-code/managed-settings.json"


def _allow_hook(tmp_path):
    return pre("Echo", answer(tmp_path, "allow", _specific(permissionDecision="allow")))


def _policy(tmp_path, mode="default", asked=None, answer_value=None, **rules) -> PermissionPolicy:
    async def asker(request):
        asked.append(request)
        return answer_value
    parsed = {b: [parse_rule(t, source=MANAGED, behavior=b) for t in texts] for b, texts in rules.items()}
    return PermissionPolicy(mode=mode, project_root=tmp_path, asker=asker if asked is not None else None, **parsed)


async def test_a_hooks_allow_does_not_override_a_managed_deny_rule(tmp_path):
    gate = PermissionGate(_policy(tmp_path, "bypassPermissions", deny=["Echo"]))
    block, tool = await _call(tmp_path, _allow_hook(tmp_path), inner=gate)
    assert block["is_error"] and "denied by the rule 'Echo'" in block["content"] and MANAGED in block["content"]
    assert tool.seen == [] and gate.denials == [{"tool_name": "Echo", "tool_use_id": "toolu_1", "tool_input": {"text": "hi", "loud": False}}]


async def test_a_hooks_allow_does_not_answer_an_ask_rule(tmp_path):
    asked: list = []
    gate = PermissionGate(_policy(tmp_path, asked=asked, answer_value=False, ask=["Echo"]))
    block, tool = await _call(tmp_path, _allow_hook(tmp_path), inner=gate)
    assert block["is_error"] and tool.seen == [] and len(asked) == 1 and "ask rule" in asked[0].reason
    gate = PermissionGate(_policy(tmp_path, asked=asked, answer_value=True, ask=["Echo"]))
    block, tool = await _call(tmp_path, _allow_hook(tmp_path), inner=gate)
    assert block["content"] == "hi" and len(asked) == 2


async def test_an_ask_rule_with_nobody_to_ask_is_denied_despite_the_hook(tmp_path):
    gate = PermissionGate(_policy(tmp_path, ask=["Echo"]))
    block, tool = await _call(tmp_path, _allow_hook(tmp_path), inner=gate)
    assert block["is_error"] and tool.seen == []


async def test_the_hooks_allow_stands_where_only_the_mode_would_ask(tmp_path):
    for mode in ("default", "dontAsk", "acceptEdits"):
        gate = PermissionGate(_policy(tmp_path, mode, allow=["Other"]))  # nobody to ask; no rule covers Echo
        block, tool = await _call(tmp_path, _allow_hook(tmp_path), inner=gate)
        assert block["content"] == "hi" and len(tool.seen) == 1, mode


async def test_plan_mode_stays_read_only_under_a_hooks_allow(tmp_path):
    gate = PermissionGate(_policy(tmp_path, "plan"))
    block, tool = await _call(tmp_path, _allow_hook(tmp_path), inner=gate)
    assert block["is_error"] and "plan mode" in block["content"] and tool.seen == []


async def test_the_gate_decides_in_default_when_settings_disable_bypass(tmp_path):
    policy = _policy(tmp_path, "bypassPermissions")  # e.g. an answer's setMode put it there
    block, tool = await _call(tmp_path, {}, inner=PermissionGate(policy, bypass_disabled=True))
    assert block["is_error"] and tool.seen == [] and policy.mode == "default"
    block, _ = await _call(tmp_path, {}, inner=PermissionGate(_policy(tmp_path, "bypassPermissions")))
    assert block["content"] == "hi"


async def test_a_permission_request_hooks_set_mode_to_bypass_is_refused_where_disabled(tmp_path):
    update = {"type": "setMode", "mode": "bypassPermissions", "destination": "session"}
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                    "decision": {"behavior": "allow", "updatedPermissions": [update]}}}
    hooks = {"PermissionRequest": [{"hooks": [{"type": "command", "command": answer(tmp_path, "ok", allow)}]}]}
    for disabled, mode in ((True, "default"), (False, "bypassPermissions")):
        policy = _policy(tmp_path)
        on_request = permission_request_hook(HookRegistry(hooks, project_dir=tmp_path), policy, bypass_disabled=disabled)
        block, _ = await _call(tmp_path, {}, inner=PermissionGate(policy, on_request=on_request, bypass_disabled=disabled))
        assert block["content"] == "hi" and policy.mode == mode  # this call allowed; the mode as settings permit


def test_echo_is_what_these_tests_assume():
    assert not Echo.read_only and not Echo.coordination
