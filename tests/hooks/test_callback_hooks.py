"""claude-agent-sdk hook callbacks as a hook type: run by the registry's callback, answered
as a command hook's JSON, failing (not blocking) when nobody can run them."""

from __future__ import annotations

from typing import Any

from covey.hooks import HookRegistry
from covey.hooks.callback import sdk_hook_settings
from covey.settings.merged import Settings

DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": "no writes"}}
HOOKS = sdk_hook_settings({"PreToolUse": [{"matcher": "Write", "hookCallbackIds": ["hook_0"]}]})


async def test_a_callback_hook_gets_the_payload_and_its_deny_blocks(tmp_path):
    seen: list[tuple[str, dict[str, Any], str | None]] = []

    async def callback(callback_id: str, payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        seen.append((callback_id, payload, tool_use_id))
        return DENY

    hooks = HookRegistry(HOOKS, project_dir=tmp_path, callback=callback)
    outcome = await hooks.run_pre_tool_use("agent-1", "Write", {"file_path": "x"}, tool_use_id="toolu_1")
    assert outcome.blocked and "no writes" in (outcome.reason or "")
    [(callback_id, payload, tool_use_id)] = seen
    assert (callback_id, tool_use_id, payload["tool_name"], payload["tool_input"]) == ("hook_0", "toolu_1", "Write",
                                                                                        {"file_path": "x"})
    # The matcher holds: another tool's call does not reach the SDK.
    await hooks.run_pre_tool_use("agent-1", "Read", {"file_path": "x"}, tool_use_id="toolu_2")
    assert len(seen) == 1


async def test_a_callback_hook_nobody_can_run_fails_without_blocking(tmp_path):
    async def broken(*_: Any) -> dict[str, Any]:
        raise RuntimeError("the SDK said no such callback")

    for callback in (None, broken):
        hooks = HookRegistry(HOOKS, project_dir=tmp_path, callback=callback)
        outcome = await hooks.run_pre_tool_use("agent-1", "Write", {"file_path": "x"})
        assert not outcome.blocked


def test_sdk_hooks_join_the_settings_hooks(tmp_path):
    settings = Settings.load(tmp_path, home=tmp_path)
    settings.add_hooks(HOOKS, "hooks of the claude-agent-sdk client")
    assert settings.hooks["PreToolUse"][0]["hooks"][0] == {"type": "callback", "callback_id": "hook_0"}
    settings.add_hooks({"FileChanged": [{"hooks": [{"type": "callback", "callback_id": "x"}]}]}, "the SDK")
    assert any("FileChanged" in str(w) for w in settings.warnings)  # what covey does not run is said
