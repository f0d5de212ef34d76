import json
import logging
import os
import time
from pathlib import Path
from types import SimpleNamespace

from covey.hooks import HookRegistry
from tests.hooks.scripts import answer, dump_stdin, exit_with, pre, py_hook, read_json


def _registry(tmp_path: Path, hooks=None) -> HookRegistry:
    return HookRegistry(hooks, project_dir=tmp_path, session_id="sess-1", transcript_path="/t.jsonl")


async def _pre(registry: HookRegistry, tool="Bash", agent="agent-a", tool_input=None):
    return await registry.run_pre_tool_use(agent, tool, tool_input or {"command": "ls"}, tool_use_id="toolu_1")


async def test_exit_2_blocks_with_stderr_as_reason(tmp_path):
    registry = _registry(tmp_path, pre("Bash", exit_with(tmp_path, "no", 2, "rm is not allowed")))
    outcome = await _pre(registry)
    assert outcome.blocked and outcome.reason == "rm is not allowed"


async def test_other_exit_codes_do_not_block_and_are_logged(tmp_path, caplog):
    registry = _registry(tmp_path, pre("Bash", exit_with(tmp_path, "crash", 1, "boom")))
    with caplog.at_level(logging.WARNING):
        outcome = await _pre(registry)
    assert not outcome.blocked and outcome.permission_decision is None
    assert "boom" in caplog.text and "non-blocking" in caplog.text


async def test_json_deny_blocks_with_its_reason(tmp_path):
    reply = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                    "permissionDecisionReason": "prod is read-only"}}
    outcome = await _pre(_registry(tmp_path, pre("*", answer(tmp_path, "deny", reply))))
    assert outcome.blocked and outcome.permission_decision == "deny" and outcome.reason == "prod is read-only"


async def test_json_updated_input_and_allow(tmp_path):
    reply = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                    "updatedInput": {"command": "ls -la"}}}
    outcome = await _pre(_registry(tmp_path, pre("Bash", answer(tmp_path, "fix", reply))))
    assert not outcome.blocked and outcome.updated_input == {"command": "ls -la"}
    assert outcome.permission_decision == "allow"


async def test_matcher_filters_and_plain_stdout_is_ignored(tmp_path):
    registry = _registry(tmp_path, pre("Edit|Write", exit_with(tmp_path, "no", 2, "edits frozen")))
    assert not (await _pre(registry, tool="Read")).blocked
    assert (await _pre(registry, tool="Write")).blocked


async def test_matching_hooks_run_concurrently_and_any_block_wins(tmp_path):
    # Each slow hook says it started, then waits (up to 20 s) until the other has started
    # too: only hooks that run at the same time can both finish their wait in time.
    def meets(name: str, other: str, tail: str = "") -> str:
        return py_hook(tmp_path, name, (
            "import time, pathlib\n"
            f"pathlib.Path({str(tmp_path / name)!r} + '.started').touch()\n"
            "deadline = time.monotonic() + 20\n"
            f"while not pathlib.Path({str(tmp_path / other)!r} + '.started').exists():\n"
            "    if time.monotonic() > deadline: sys.exit(1)\n"
            "    time.sleep(0.01)\n"
            f"pathlib.Path({str(tmp_path / name)!r} + '.met').touch()\n" + tail
        ))

    slow_ok = meets("slow_ok", "slow_block")
    slow_block = meets("slow_block", "slow_ok", "sys.stderr.write('no'); sys.exit(2)\n")
    allow = answer(tmp_path, "allow", {"hookSpecificOutput": {"permissionDecision": "allow"}})
    registry = _registry(tmp_path, pre("*", slow_ok, slow_block, allow))
    outcome = await _pre(registry)
    assert (tmp_path / "slow_ok.met").exists() and (tmp_path / "slow_block.met").exists()  # they overlapped
    assert outcome.blocked and outcome.reason == "no"


async def test_timeout_kills_the_hook_and_its_children(tmp_path):
    pid_file = tmp_path / "pid"
    command = f"sleep 30 & echo $! > {pid_file}; wait"
    registry = _registry(tmp_path, pre("*", command, timeout=0.5))
    started = time.monotonic()
    outcome = await _pre(registry)
    assert time.monotonic() - started < 5 and not outcome.blocked
    assert not _alive(int(pid_file.read_text()))


def _alive(pid: int) -> bool:
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        stat = Path(f"/proc/{pid}/stat")
        if not stat.exists() or stat.read_text().split(")")[-1].split()[0] in ("Z", "X"):
            return False
        time.sleep(0.05)
    return True


async def test_definition_hooks_apply_only_to_their_agent_until_removed(tmp_path):
    registry = _registry(tmp_path)
    registry.register("agent-a", {"PreToolUse": [{"matcher": "Bash", "command": exit_with(tmp_path, "no", 2, "a only")}]})
    assert (await _pre(registry, agent="agent-a")).blocked
    assert not (await _pre(registry, agent="agent-b")).blocked
    registry.remove("agent-a")
    assert not (await _pre(registry, agent="agent-a")).blocked


async def test_definition_stop_hooks_become_subagent_stop(tmp_path):
    registry = _registry(tmp_path)
    keep_going = answer(tmp_path, "more", {"decision": "block", "reason": "run the tests first"})
    registry.register("agent-a", {"Stop": [{"command": keep_going}]})
    assert registry.hooks_for("Stop", "agent-a") == []
    outcome = await registry.run_stop("agent-a", subagent=True, last_message="done")
    assert outcome.blocked and outcome.reason == "run the tests first"
    assert not (await registry.run_stop("agent-a", subagent=False)).blocked


async def test_continue_false_stops_even_if_another_hook_blocks(tmp_path):
    hooks = {"Stop": [{"hooks": [
        {"type": "command", "command": answer(tmp_path, "block", {"decision": "block", "reason": "go on"})},
        {"type": "command", "command": answer(tmp_path, "halt", {"continue": False, "stopReason": "budget"})},
    ]}]}
    outcome = await _registry(tmp_path, hooks).run_stop("main", subagent=False)
    assert outcome.stop and not outcome.blocked and outcome.stop_reason == "budget"


async def test_pre_tool_payload_cwd_and_project_dir(tmp_path):
    out, workdir = tmp_path / "payload.json", tmp_path / "work"
    workdir.mkdir()
    registry = _registry(tmp_path, pre("Bash", dump_stdin(tmp_path, "dump", out)))
    await registry.run_pre_tool_use("agent-a", "Bash", {"command": "ls"}, cwd=workdir, tool_use_id="toolu_7")
    seen = read_json(out)
    assert seen["payload"] == {
        "session_id": "sess-1", "transcript_path": "/t.jsonl", "cwd": str(workdir),
        "hook_event_name": "PreToolUse", "agent_id": "agent-a", "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "tool_use_id": "toolu_7",
    }
    assert seen["cwd"] == str(workdir) and seen["project"] == str(tmp_path)


async def test_post_tool_payload_has_the_response(tmp_path):
    out = tmp_path / "payload.json"
    hooks = {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": dump_stdin(tmp_path, "d", out)}]}]}
    await _registry(tmp_path, hooks).run_post_tool_use(
        "agent-a", "Write", {"file_path": "/x"}, {"content": "ok"}, tool_use_id="toolu_2", session_id="other")
    payload = read_json(out)["payload"]
    assert payload["hook_event_name"] == "PostToolUse" and payload["tool_response"] == {"content": "ok"}
    assert payload["session_id"] == "other" and payload["tool_use_id"] == "toolu_2"


async def test_user_prompt_submit_context_and_block(tmp_path):
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": py_hook(tmp_path, "ctx", "print('today is Monday')")}]}]}
    outcome = await _registry(tmp_path, hooks).run_user_prompt_submit("hello")
    assert outcome.additional_context == "today is Monday" and not outcome.blocked
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": exit_with(tmp_path, "no", 2, "no secrets")}]}]}
    outcome = await _registry(tmp_path, hooks).run_user_prompt_submit("my password is x")
    assert outcome.blocked and outcome.reason == "no secrets"


async def test_session_start_additional_context(tmp_path):
    reply = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "branch: main"}}
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": answer(tmp_path, "s", reply)}]}]}
    assert (await _registry(tmp_path, hooks).run_session_start()).additional_context == "branch: main"


async def test_no_hooks_means_no_processes(tmp_path):
    outcome = await _pre(_registry(tmp_path))
    assert not outcome.blocked and outcome.updated_input is None


async def test_invalid_json_output_is_a_non_blocking_error(tmp_path, caplog):
    hook = py_hook(tmp_path, "bad", "print('{not json')\n")
    with caplog.at_level(logging.WARNING):
        outcome = await _pre(_registry(tmp_path, pre("*", hook)))
    assert not outcome.blocked and "invalid JSON" in caplog.text


async def test_a_permission_prompt_runs_the_notification_hooks_before_the_person_is_asked(tmp_path):
    out = tmp_path / "notified.json"
    hooks = {"Notification": [{"hooks": [{"type": "command", "command": dump_stdin(tmp_path, "n", out)}]}]}
    registry = _registry(tmp_path, hooks)
    asked: list[str] = []

    async def person(request):
        asked.append(request.tool_name)
        assert out.exists()  # the notification came first
        return True

    ask = registry.notifying(person, "agent-a")
    assert await ask(SimpleNamespace(tool_name="Bash")) is True and asked == ["Bash"]
    payload = json.loads(out.read_text())["payload"]
    assert payload["hook_event_name"] == "Notification" and payload["agent_id"] == "agent-a"
    assert payload["message"] == "covey needs your permission to use Bash"
    assert registry.notifying(None, "agent-a") is None  # nobody to ask: no prompt, no notification


async def test_commands_run_with_the_runs_env_plus_the_project_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("FOO", raising=False)
    monkeypatch.setenv("SERVICE_ONLY", "leaked")
    out = tmp_path / "env.json"
    hook = py_hook(tmp_path, "env", f"open({str(out)!r}, 'w').write(json.dumps(dict(os.environ)))\n")
    env = {"PATH": os.environ["PATH"], "FOO": "bar"}
    registry = HookRegistry(pre("Bash", hook), project_dir=tmp_path, env=env)
    await _pre(registry)
    seen = read_json(out)
    assert seen["FOO"] == "bar" and seen["CLAUDE_PROJECT_DIR"] == str(tmp_path)
    assert "SERVICE_ONLY" not in seen


async def test_without_an_env_commands_inherit_this_process(tmp_path, monkeypatch):
    monkeypatch.setenv("FOO", "from-os-environ")
    out = tmp_path / "env.json"
    hook = py_hook(tmp_path, "env", f"open({str(out)!r}, 'w').write(os.environ['FOO'])\n")
    await _pre(_registry(tmp_path, pre("Bash", hook)))
    assert out.read_text() == "from-os-environ"
