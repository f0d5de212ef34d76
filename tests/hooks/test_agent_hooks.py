"""``type: "agent"`` hooks: a verifier agent gets the prompt and the event's payload, may Read, Grep
and Glob the project, and answers ``{"ok": ...}`` through StructuredOutput, applied as a prompt
hook's answer is (ScriptedModel, no network)."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from covey.agent.lifecycle import AgentServices, run_agent
from covey.agent.progress import CountedModel, Progress
from covey.definitions.definition import AgentDefinition
from covey.hooks import AgentHook, HookRegistry, read_hooks
from covey.hooks.verifier import MAX_TURNS, SYSTEM, verifier
from covey.model.pricing import PriceTable
from covey.model.scripted import ScriptedModel
from covey.permissions.policy import PermissionPolicy
from covey.permissions.rules import parse_rule
from covey.runtime.spec import AgentSpec, RunSettings

CHECK = "Did the agent run the tests? Read NOTES.md. $ARGUMENTS"


def _agent(event: str, prompt: str = CHECK, **extra) -> dict:
    return {event: [{"hooks": [{"type": "agent", "prompt": prompt, **extra}]}]}


def _verdict(ok: bool, reason: str | None = None) -> dict:
    return {"tool_use": {"name": "StructuredOutput", "input": {"ok": ok, **({"reason": reason} if reason else {})}}}


def _read(path: str) -> dict:
    return {"tool_use": {"name": "Read", "input": {"file_path": path}}}


def _grep(pattern: str) -> dict:
    return {"name": "Grep", "input": {"pattern": pattern, "output_mode": "content"}}


def _registry(tmp_path: Path, hooks: dict, *turns, policy=None) -> tuple[HookRegistry, ScriptedModel]:
    registry = HookRegistry(hooks, project_dir=tmp_path, session_id="s-1")
    model = ScriptedModel.from_turns([{"text": t} if isinstance(t, str) else t for t in turns])
    registry.model = model
    registry.verify = verifier(model, policy, project_dir=tmp_path)
    return registry, model


def _pre(registry: HookRegistry):
    return registry.run_pre_tool_use("main", "Bash", {"command": "rm -rf build"}, tool_use_id="toolu_1")


def _notes(tmp_path: Path, text: str = "tests: NOT RUN\n") -> Path:
    path = tmp_path / "NOTES.md"
    path.write_text(text)
    return path


def _tool_results(request) -> list[dict]:
    return [block for block in request.messages[-1]["content"] if block["type"] == "tool_result"]


# --- reading ------------------------------------------------------------------------------

def test_an_agent_hook_registers_without_a_warning_and_defaults_to_60_seconds():
    parsed = read_hooks({**_agent("Stop", model="sonnet"), **_agent("PreToolUse", timeout=5)}, "settings.json")
    (stop,) = parsed.config["Stop"][0].hooks
    (pre,) = parsed.config["PreToolUse"][0].hooks
    assert parsed.warnings == []
    assert isinstance(stop, AgentHook) and (stop.prompt, stop.model) == (CHECK, "sonnet")
    assert stop.timeout_for("Stop") == 60 and pre.timeout_for("PreToolUse") == 5
    assert parsed.kept["Stop"][0]["hooks"][0] == {"type": "agent", "prompt": CHECK, "model": "sonnet"}


def test_an_agent_hook_on_an_event_without_prompt_hooks_is_skipped_with_a_warning():
    parsed = read_hooks(_agent("SessionStart"), "settings.json")
    assert parsed.config["SessionStart"][0].hooks == []
    assert [w.field for w in parsed.warnings] == ["hooks.SessionStart[0].hooks[0].type"]
    assert "Claude Code runs agent hooks only on" in parsed.warnings[0].message


# --- what the verifier does ---------------------------------------------------------------

async def test_the_verifier_reads_a_file_and_its_ok_false_sends_the_agent_back_on_stop(tmp_path):
    _notes(tmp_path)
    registry, model = _registry(tmp_path, _agent("Stop"), _read("NOTES.md"),
                                _verdict(False, "NOTES.md says the tests were not run"))
    outcome = await registry.run_stop("main", subagent=False, last_message="Done.")
    assert outcome.blocked and outcome.reason == "NOTES.md says the tests were not run" and not outcome.stop
    first, second = model.requests
    asked = first.messages[0]["content"]
    assert json.loads(asked.removeprefix(CHECK.replace("$ARGUMENTS", "")))["last_assistant_message"] == "Done."
    assert first.model == "claude-haiku-4-5" and first.system[0]["text"] == SYSTEM.format(cwd=tmp_path)
    assert {tool["name"] for tool in first.tools} == {"Read", "Grep", "Glob", "StructuredOutput"}
    (result,) = _tool_results(second)
    assert "tests: NOT RUN" in result["content"] and not result.get("is_error")


async def test_ok_false_on_a_tool_event_blocks_and_stops_as_a_prompt_hook_does(tmp_path):
    registry, _ = _registry(tmp_path, _agent("PreToolUse"), _verdict(False, "Deletes the build"))
    outcome = await _pre(registry)
    assert outcome.blocked and outcome.reason == "Deletes the build"
    assert outcome.stop and outcome.stop_reason == "Deletes the build"


async def test_ok_false_on_permission_request_denies_with_the_reason(tmp_path):
    registry, _ = _registry(tmp_path, _agent("PermissionRequest"), _verdict(False, "Not on main"))
    verdict = await registry.run_permission_request("main", "Bash", {"command": "git push"})
    assert verdict is not None and (verdict.behavior, verdict.message) == ("deny", "Not on main")


async def test_ok_true_after_searching_allows(tmp_path, caplog):
    _notes(tmp_path, "tests: 12 passed\n")
    registry, model = _registry(
        tmp_path, _agent("Stop"), {"tool_use": [{"name": "Glob", "input": {"pattern": "*.md"}}, _grep("passed")]},
        _verdict(True))
    with caplog.at_level(logging.WARNING):
        outcome = await registry.run_stop("main", subagent=False, last_message="Done.")
    assert not outcome.blocked and not outcome.stop and "non-blocking" not in caplog.text
    glob, grep = _tool_results(model.requests[1])
    assert "NOTES.md" in glob["content"] and "12 passed" in grep["content"]


async def test_a_final_text_without_the_call_is_read_as_a_prompt_hooks_answer(tmp_path):
    registry, _ = _registry(tmp_path, _agent("Stop"), '```json\n{"ok": false, "reason": "No tests"}\n```')
    outcome = await registry.run_stop("main", subagent=False)
    assert outcome.blocked and outcome.reason == "No tests"


@pytest.mark.parametrize("turns", [
    ["sure, looks fine"],
    [{"tool_use": {"name": "StructuredOutput", "input": {"verdict": "fine"}}}] * 5,
    [ValueError("API down")],
    [{"text": "cut", "stop_reason": "max_tokens"}],
])
async def test_a_garbled_answer_or_a_failed_model_is_a_non_blocking_error(tmp_path, caplog, turns):
    registry, _ = _registry(tmp_path, _agent("PreToolUse"), *turns)
    with caplog.at_level(logging.WARNING):
        outcome = await _pre(registry)
    assert not outcome.blocked and not outcome.stop and "non-blocking" in caplog.text


async def test_a_verifier_slower_than_the_timeout_is_a_non_blocking_error(tmp_path, caplog):
    registry, model = _registry(tmp_path, _agent("PreToolUse", timeout=0.05), _verdict(False, "late"))
    model.latency_s = 5
    with caplog.at_level(logging.WARNING):
        outcome = await asyncio.wait_for(_pre(registry), 3)
    assert not outcome.blocked and "no verdict within 0.05s" in caplog.text


async def test_a_verifier_that_never_answers_ends_after_50_turns(tmp_path, caplog):
    _notes(tmp_path)
    registry, model = _registry(tmp_path, _agent("PreToolUse"), *[_read("NOTES.md")] * (MAX_TURNS + 1))
    with caplog.at_level(logging.WARNING):
        outcome = await _pre(registry)
    assert not outcome.blocked and len(model.requests) == MAX_TURNS == 50
    assert "no verdict within 50 turns" in caplog.text


async def test_without_a_verifier_an_agent_hook_is_a_non_blocking_error(tmp_path, caplog):
    registry = HookRegistry(_agent("PreToolUse"), project_dir=tmp_path)
    with caplog.at_level(logging.WARNING):
        outcome = await _pre(registry)
    assert not outcome.blocked and "no verifier to run" in caplog.text


# --- where it may read --------------------------------------------------------------------

async def test_the_verifier_reads_nothing_outside_the_working_directories(tmp_path):
    outside = tmp_path / "elsewhere" / "secret.txt"
    outside.parent.mkdir()
    outside.write_text("the secret")
    project = tmp_path / "project"
    project.mkdir()
    registry = HookRegistry(_agent("Stop"), project_dir=project)
    registry.model = model = ScriptedModel.from_turns([_read(str(outside)), _verdict(True)])
    registry.verify = verifier(model, None, project_dir=project)
    await registry.run_stop("main", subagent=False)
    (result,) = _tool_results(model.requests[1])
    assert result.get("is_error") and "the secret" not in result["content"]


async def test_the_verifier_keeps_the_agents_read_deny_rules(tmp_path):
    (tmp_path / ".env").write_text("TOKEN=abc")
    policy = PermissionPolicy(project_root=tmp_path, deny=[parse_rule("Read(./.env)", source="settings")])
    registry, model = _registry(tmp_path, _agent("Stop"), _read(".env"), {"tool_use": _grep("TOKEN")}, _verdict(True),
                                policy=policy)
    await registry.run_stop("main", subagent=False)
    (read,) = _tool_results(model.requests[1])
    (grep,) = _tool_results(model.requests[2])
    assert read.get("is_error") and "TOKEN=abc" not in read["content"] and "TOKEN=abc" not in grep["content"]


# --- in a running agent -------------------------------------------------------------------

async def test_a_stop_agent_hook_runs_through_the_counted_model_and_its_requests_cost_the_agent(tmp_path):
    _notes(tmp_path)
    spec = AgentSpec(
        session_id="s-1", agent_id="main-1", definition=AgentDefinition(name="main", description="main"),
        prompt="fix the bug", model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=[], max_turns=4,
        transcript_dir=str(tmp_path / "t"), settings=RunSettings(hooks=_agent("Stop"), project_dir=str(tmp_path)))
    model = ScriptedModel.from_turns([
        {"text": "Fixed."}, _read("NOTES.md"), _verdict(False, "Run the tests first"),
        {"text": "Tests pass."}, _verdict(True),
    ])
    progress = Progress(spec, PriceTable.load(None))
    services = AgentServices(model=model, aside_model=CountedModel(model, progress))
    events = [event async for event in run_agent(spec, services)]
    assert [r.model for r in model.requests] == ["claude-sonnet-4-6", *["claude-haiku-4-5"] * 2, "claude-sonnet-4-6",
                                                 "claude-haiku-4-5"]
    assert "Run the tests first" in json.dumps(model.requests[3].messages[-1])
    assert events[-1].result == "Tests pass."
    # Only the verifier's three requests went through the counted model: the agent's spending has them.
    assert set(progress.model_usage) == {"claude-haiku-4-5"} and progress.cost_usd > 0
    assert progress.usage.input_tokens > 0 and progress.turns == 0
