"""Each event covey fires, with Claude Code's payload fields, matcher and decision fields (HookRegistry, no agent)."""

import logging

from covey.hooks import HookRegistry
from tests.hooks.scripts import answer, dump_stdin, exit_with, py_hook, read_json


def _registry(tmp_path, hooks) -> HookRegistry:
    return HookRegistry(hooks, project_dir=tmp_path, session_id="sess-1", transcript_path="/main.jsonl")


def _on(event: str, matcher: str | None, command: str) -> dict:
    group = {"hooks": [{"type": "command", "command": command}]}
    return {event: [{**({"matcher": matcher} if matcher is not None else {}), **group}]}


async def test_session_start_matches_its_source(tmp_path):
    startup, resume = tmp_path / "startup.json", tmp_path / "resume.json"
    hooks = {"SessionStart": [
        {"matcher": "startup", "hooks": [{"type": "command", "command": dump_stdin(tmp_path, "s", startup)}]},
        {"matcher": "resume|compact", "hooks": [{"type": "command", "command": dump_stdin(tmp_path, "r", resume)}]},
    ]}
    registry = _registry(tmp_path, hooks)
    await registry.run_session_start(source="resume", model="claude-sonnet-4-6")
    assert not startup.exists()
    payload = read_json(resume)["payload"]
    assert payload["source"] == "resume" and payload["model"] == "claude-sonnet-4-6"
    assert payload["hook_event_name"] == "SessionStart" and payload["transcript_path"] == "/main.jsonl"
    await registry.run_session_start(source="startup")
    assert read_json(startup)["payload"]["source"] == "startup"


async def test_session_start_plain_stdout_and_additional_context_are_context(tmp_path):
    hooks = {"SessionStart": [{"hooks": [
        {"type": "command", "command": py_hook(tmp_path, "plain", "print('branch: main')")},
        {"type": "command", "command": answer(tmp_path, "structured", {"hookSpecificOutput": {
            "hookEventName": "SessionStart", "additionalContext": "issue #42 is open"}})},
    ]}]}
    outcome = await _registry(tmp_path, hooks).run_session_start()
    assert set(outcome.additional_context.splitlines()) == {"branch: main", "issue #42 is open"}


async def test_session_end_carries_its_reason_and_matches_on_it(tmp_path):
    out, cleared = tmp_path / "end.json", tmp_path / "clear.json"
    hooks = {"SessionEnd": [
        {"matcher": "other|prompt_input_exit", "hooks": [{"type": "command", "command": dump_stdin(tmp_path, "e", out)}]},
        {"matcher": "clear", "hooks": [{"type": "command", "command": dump_stdin(tmp_path, "c", cleared)}]},
    ]}
    await _registry(tmp_path, hooks).run_session_end("prompt_input_exit")
    payload = read_json(out)["payload"]
    assert payload["hook_event_name"] == "SessionEnd" and payload["reason"] == "prompt_input_exit"
    assert payload["session_id"] == "sess-1" and not cleared.exists()


async def test_session_end_hooks_share_a_short_budget(tmp_path):
    # Claude Code gives SessionEnd hooks 1.5 s unless one sets a longer timeout.
    from covey.hooks.config import CommandHook
    from covey.hooks.runner import _session_end_budget

    assert _session_end_budget([CommandHook(command="x")], {}) == 1.5
    assert _session_end_budget([CommandHook(command="x", timeout=20)], {}) == 20
    assert _session_end_budget([CommandHook(command="x", timeout=600)], {}) == 60
    assert _session_end_budget([CommandHook(command="x")], {"CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS": "5000"}) == 5


async def test_subagent_start_names_the_child_matches_its_type_and_gives_it_context(tmp_path):
    out = tmp_path / "start.json"
    reply = {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "use camelCase"}}
    hooks = {"SubagentStart": [
        {"matcher": "code-reviewer", "hooks": [{"type": "command", "command": dump_stdin(tmp_path, "d", out)},
                                               {"type": "command", "command": answer(tmp_path, "ctx", reply)}]},
        {"matcher": "Explore", "hooks": [{"type": "command", "command": exit_with(tmp_path, "x", 2, "not me")}]},
    ]}
    registry = _registry(tmp_path, hooks)
    registry.describe("agent-7", agent_type="code-reviewer", subagent=True, transcript_path="/agent-7.jsonl")
    outcome = await registry.run_subagent_start("agent-7", "code-reviewer")
    assert outcome.additional_context == "use camelCase" and not outcome.blocked
    payload = read_json(out)["payload"]
    assert (payload["agent_id"], payload["agent_type"]) == ("agent-7", "code-reviewer")
    assert payload["transcript_path"] == "/main.jsonl"


async def test_subagent_stop_carries_the_childs_transcript_and_type(tmp_path):
    out = tmp_path / "stop.json"
    registry = _registry(tmp_path, _on("SubagentStop", "reviewer", dump_stdin(tmp_path, "d", out)))
    registry.describe("agent-7", agent_type="reviewer", subagent=True, transcript_path="/agent-7.jsonl")
    await registry.run_stop("agent-7", subagent=True, last_message="all good")
    payload = read_json(out)["payload"]
    assert payload["transcript_path"] == "/main.jsonl" and payload["agent_transcript_path"] == "/agent-7.jsonl"
    assert payload["agent_type"] == "reviewer" and payload["last_assistant_message"] == "all good"
    assert payload["stop_hook_active"] is False


async def test_a_stop_hooks_additional_context_keeps_the_agent_going(tmp_path):
    reply = {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "tests still fail"}}
    outcome = await _registry(tmp_path, _on("Stop", None, answer(tmp_path, "s", reply))).run_stop("main", subagent=False)
    assert outcome.blocked and outcome.reason == "tests still fail"


async def test_the_main_agents_payload_names_no_agent(tmp_path):
    out = tmp_path / "p.json"
    registry = _registry(tmp_path, _on("PreToolUse", "Bash", dump_stdin(tmp_path, "d", out)))
    registry.describe("main-1", agent_type="main", subagent=False)
    await registry.run_pre_tool_use("main-1", "Bash", {"command": "ls"}, tool_use_id="t1")
    assert "agent_id" not in read_json(out)["payload"] and "agent_type" not in read_json(out)["payload"]


async def test_post_tool_use_failure_payload_and_feedback(tmp_path):
    out = tmp_path / "fail.json"
    reply = {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "run npm install"}}
    hooks = {"PostToolUseFailure": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": dump_stdin(tmp_path, "d", out)},
        {"type": "command", "command": answer(tmp_path, "ctx", reply)}]}]}
    outcome = await _registry(tmp_path, hooks).run_post_tool_use_failure(
        "agent-a", "Bash", {"command": "npm test"}, "Exit code 1\nmodule not found", tool_use_id="toolu_9")
    assert outcome.additional_context == "run npm install"
    payload = read_json(out)["payload"]
    assert payload["error"] == "Exit code 1\nmodule not found" and payload["is_interrupt"] is False
    assert payload["tool_use_id"] == "toolu_9" and payload["tool_input"] == {"command": "npm test"}


async def test_permission_request_decides_for_the_person(tmp_path):
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                    "decision": {"behavior": "allow", "updatedInput": {"command": "npm run lint"}}}}
    out = tmp_path / "req.json"
    hooks = {"PermissionRequest": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": answer(tmp_path, "a", allow)},
        {"type": "command", "command": dump_stdin(tmp_path, "d", out)}]}]}
    verdict = await _registry(tmp_path, hooks).run_permission_request(
        "agent-a", "Bash", {"command": "npm run lnt"}, suggestions=[{"type": "addRules"}])
    assert verdict.behavior == "allow" and verdict.updated_input == {"command": "npm run lint"}
    payload = read_json(out)["payload"]
    assert "tool_use_id" not in payload and payload["permission_suggestions"] == [{"type": "addRules"}]


async def test_permission_request_deny_wins_and_exit_2_decides_nothing(tmp_path):
    deny = {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                   "decision": {"behavior": "deny", "message": "not on Fridays"}}}
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    hooks = _on("PermissionRequest", "*", answer(tmp_path, "d", deny))
    hooks["PermissionRequest"][0]["hooks"].append({"type": "command", "command": answer(tmp_path, "a", allow)})
    verdict = await _registry(tmp_path, hooks).run_permission_request("agent-a", "Bash", {"command": "ls"})
    assert verdict.behavior == "deny" and verdict.message == "not on Fridays"
    only_exit_2 = _on("PermissionRequest", "*", exit_with(tmp_path, "x", 2, "no"))
    assert await _registry(tmp_path, only_exit_2).run_permission_request("agent-a", "Bash", {"command": "ls"}) is None


async def test_pre_compact_matches_its_trigger_and_can_block(tmp_path):
    out = tmp_path / "compact.json"
    hooks = {"PreCompact": [
        {"matcher": "auto", "hooks": [{"type": "command", "command": dump_stdin(tmp_path, "d", out)}]},
        {"matcher": "manual", "hooks": [{"type": "command", "command": exit_with(tmp_path, "no", 2, "not now")}]},
    ]}
    registry = _registry(tmp_path, hooks)
    assert not (await registry.run_pre_compact("auto")).blocked
    assert read_json(out)["payload"]["trigger"] == "auto"
    assert read_json(out)["payload"]["custom_instructions"] is None
    outcome = await registry.run_pre_compact("manual", custom_instructions="keep the plan")
    assert outcome.blocked and outcome.reason == "not now"


async def test_pre_compact_stdout_becomes_summary_instructions(tmp_path):
    said = py_hook(tmp_path, "said", "print('Keep the migration plan.')\n")
    registry = _registry(tmp_path, {"PreCompact": [{"hooks": [{"type": "command", "command": said}]}]})
    outcome = await registry.run_pre_compact("auto")
    assert not outcome.blocked and outcome.additional_context == "Keep the migration plan."


async def test_post_compact_gets_the_trigger_and_the_summary(tmp_path):
    out = tmp_path / "post.json"
    registry = _registry(tmp_path, {"PostCompact": [
        {"matcher": "auto", "hooks": [{"type": "command", "command": dump_stdin(tmp_path, "d", out)}]}]})
    await registry.run_post_compact("auto", "the summary", agent_id="agent-a")
    payload = read_json(out)["payload"]
    assert (payload["hook_event_name"], payload["trigger"], payload["compact_summary"]) == (
        "PostCompact", "auto", "the summary")


async def test_setup_matches_its_trigger(tmp_path):
    out = tmp_path / "setup.json"
    registry = _registry(tmp_path, _on("Setup", "maintenance", dump_stdin(tmp_path, "d", out)))
    await registry.run_setup("init")
    assert not out.exists()
    await registry.run_setup("maintenance")
    assert read_json(out)["payload"]["trigger"] == "maintenance"


async def test_notification_matches_its_type(tmp_path, caplog):
    out = tmp_path / "n.json"
    registry = _registry(tmp_path, {"Notification": [
        {"matcher": "permission_prompt", "hooks": [{"type": "command", "command": dump_stdin(tmp_path, "d", out)}]},
        {"matcher": "idle_prompt", "hooks": [{"type": "command", "command": exit_with(tmp_path, "x", 1, "idle!")}]},
    ]})
    with caplog.at_level(logging.WARNING):
        await registry.run_notification("Claude needs your permission", title="Permission needed")
    payload = read_json(out)["payload"]
    assert payload["notification_type"] == "permission_prompt" and payload["title"] == "Permission needed"
    assert "idle!" not in caplog.text


async def test_a_matcher_on_an_event_without_matcher_support_is_ignored(tmp_path):
    out = tmp_path / "stop.json"
    registry = _registry(tmp_path, _on("Stop", "Bash", dump_stdin(tmp_path, "d", out)))
    await registry.run_stop("main", subagent=False, last_message="done")
    assert read_json(out)["payload"]["last_assistant_message"] == "done"
