"""``type: "prompt"`` hooks: the prompt and the event's payload go to a small fast model through the
session's model, whose ``{"ok": ...}`` answer decides as Claude Code's does (ScriptedModel, no network)."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from covey.agent.lifecycle import AgentServices, run_agent
from covey.definitions.definition import AgentDefinition
from covey.hooks import HookConfigError, HookRegistry, read_hooks
from covey.model.scripted import ScriptedModel
from covey.runtime.spec import AgentSpec, RunSettings


def _prompt(event: str, prompt: str = "Is the work done? $ARGUMENTS", **extra) -> dict:
    return {event: [{"hooks": [{"type": "prompt", "prompt": prompt, **extra}]}]}


def _registry(tmp_path: Path, hooks: dict, *answers) -> tuple[HookRegistry, ScriptedModel]:
    registry = HookRegistry(hooks, project_dir=tmp_path, session_id="s-1")
    registry.model = ScriptedModel.from_turns([{"text": a} if isinstance(a, str) else a for a in answers])
    return registry, registry.model


def _pre(registry: HookRegistry):
    return registry.run_pre_tool_use("main", "Bash", {"command": "rm -rf build"}, tool_use_id="toolu_1")


# --- reading ------------------------------------------------------------------------------

def test_a_prompt_hook_registers_where_claude_code_runs_one_and_is_skipped_elsewhere():
    parsed = read_hooks({**_prompt("Stop", model="sonnet", timeout=5), **_prompt("SessionStart")}, "settings.json")
    (hook,) = parsed.config["Stop"][0].hooks
    assert (hook.type, hook.prompt, hook.model, hook.timeout_for("Stop")) == ("prompt", "Is the work done? $ARGUMENTS",
                                                                            "sonnet", 5)
    assert [w.field for w in parsed.warnings] == ["hooks.SessionStart[0].hooks[0].type"]
    assert "Claude Code runs prompt hooks only on" in parsed.warnings[0].message
    assert parsed.config["SessionStart"][0].hooks == []


def test_a_prompt_hook_defaults_to_30_seconds_and_needs_its_prompt():
    (hook,) = read_hooks(_prompt("PreToolUse"), "s.json").config["PreToolUse"][0].hooks
    assert hook.timeout_for("PreToolUse") == 30
    with pytest.raises(HookConfigError, match=r"hooks\.Stop\[0\]\.hooks\[0\]\.prompt"):
        read_hooks({"Stop": [{"hooks": [{"type": "prompt", "prompt": "  "}]}]}, "s.json")


# --- what the model is asked --------------------------------------------------------------

async def test_the_small_model_gets_the_prompt_with_the_payload_in_place_of_arguments(tmp_path):
    registry, model = _registry(tmp_path, _prompt("Stop"), '{"ok": true}')
    outcome = await registry.run_stop("main", subagent=False, last_message="All tests pass.")
    (request,) = model.requests
    asked = request.messages[0]["content"]
    payload = json.loads(asked.removeprefix("Is the work done? "))
    assert not outcome.blocked and request.model == "claude-haiku-4-5"
    assert (payload["hook_event_name"], payload["last_assistant_message"]) == ("Stop", "All tests pass.")
    assert '{"ok": true}' in request.system[0]["text"] and request.tools == []


async def test_without_arguments_the_payload_is_appended_and_the_hook_may_name_its_model(tmp_path):
    registry, model = _registry(tmp_path, _prompt("PreToolUse", "Is this command safe?", model="sonnet"), '{"ok": true}')
    await _pre(registry)
    asked = model.requests[0].messages[0]["content"]
    assert asked.startswith("Is this command safe?\n\n") and json.loads(asked.split("\n\n", 1)[1])["tool_input"] == {
        "command": "rm -rf build"}
    assert model.requests[0].model == "claude-sonnet-4-6"


# --- what the answer decides --------------------------------------------------------------

async def test_ok_false_on_stop_sends_the_agent_back_with_the_reason(tmp_path):
    registry, _ = _registry(tmp_path, _prompt("Stop"), '{"ok": false, "reason": "The tests were not run"}')
    outcome = await registry.run_stop("main", subagent=False, last_message="done")
    assert outcome.blocked and outcome.reason == "The tests were not run" and not outcome.stop


async def test_ok_false_elsewhere_blocks_and_ends_the_run_as_continue_false_does(tmp_path):
    registry, _ = _registry(tmp_path, _prompt("PreToolUse"), '```json\n{"ok": false, "reason": "Deletes the build"}\n```')
    outcome = await _pre(registry)
    assert outcome.blocked and outcome.reason == "Deletes the build"
    assert outcome.stop and outcome.stop_reason == "Deletes the build"


async def test_ok_false_on_permission_request_denies_with_the_reason(tmp_path):
    registry, _ = _registry(tmp_path, _prompt("PermissionRequest"), '{"ok": false, "reason": "Not on main"}')
    verdict = await registry.run_permission_request("main", "Bash", {"command": "git push"})
    assert verdict is not None and (verdict.behavior, verdict.message) == ("deny", "Not on main")


async def test_ok_false_on_task_created_refuses_the_task_without_stopping_the_run(tmp_path):
    registry, _ = _registry(tmp_path, _prompt("TaskCreated"), '{"ok": false, "reason": "Needs a ticket"}')
    outcome = await registry.run_task_created("main", "1", "Fix it", "somehow", team_name="alpha")
    assert outcome.blocked and outcome.reason == "Needs a ticket" and not outcome.stop


@pytest.mark.parametrize("answer", ["sure, looks fine", '{"verdict": "fine"}', ValueError("API down")])
async def test_an_answer_that_is_no_verdict_or_a_failed_model_is_a_non_blocking_error(tmp_path, caplog, answer):
    registry, _ = _registry(tmp_path, _prompt("PreToolUse"), answer)
    with caplog.at_level(logging.WARNING):
        outcome = await _pre(registry)
    assert not outcome.blocked and not outcome.stop and "non-blocking" in caplog.text


async def test_a_model_slower_than_the_timeout_or_no_model_is_a_non_blocking_error(tmp_path, caplog):
    registry, model = _registry(tmp_path, _prompt("PreToolUse", timeout=0.05), '{"ok": false, "reason": "late"}')
    model.latency_s = 5
    no_model = HookRegistry(_prompt("PreToolUse"), project_dir=tmp_path)
    with caplog.at_level(logging.WARNING):
        late = await asyncio.wait_for(_pre(registry), 3)
        blind = await _pre(no_model)
    assert not late.blocked and not blind.blocked
    assert "within 0.05s" in caplog.text and "no model to ask" in caplog.text


# --- in a running agent -------------------------------------------------------------------

async def test_a_stop_prompt_hook_keeps_the_agent_working_through_the_sessions_model(tmp_path):
    hooks = _prompt("Stop", "Did the agent run the tests? $ARGUMENTS")
    spec = AgentSpec(
        session_id="s-1", agent_id="main-1", definition=AgentDefinition(name="main", description="main"),
        prompt="fix the bug", model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=[], max_turns=4,
        transcript_dir=str(tmp_path / "t"), settings=RunSettings(hooks=hooks, project_dir=str(tmp_path)))
    model = ScriptedModel.from_turns([
        {"text": "Fixed."}, {"text": '{"ok": false, "reason": "Run the tests first"}'},
        {"text": "Tests pass."}, {"text": '{"ok": true}'},
    ])
    events = [event async for event in run_agent(spec, AgentServices(model=model))]
    assert [r.model for r in model.requests] == ["claude-sonnet-4-6", "claude-haiku-4-5"] * 2
    assert "Run the tests first" in json.dumps(model.requests[2].messages[-1])
    assert events[-1].result == "Tests pass."
