"""The hook events of an agent's other occasions, fired with Claude Code's input fields:
StopFailure, PostToolBatch, InstructionsLoaded, WorktreeCreate / WorktreeRemove, Interrupt
(covey skipped them as events it never fires before). No Ray: ``run_agent`` and the hooks' registry."""

from __future__ import annotations

import json
from pathlib import Path

from covey.agent.lifecycle import AgentServices, run_agent
from covey.definitions.definition import AgentDefinition
from covey.errors import ModelAPIError
from covey.hooks.read import read_hooks
from covey.hooks.runner import HookRegistry
from covey.model.scripted import ScriptedModel
from covey.permissions.policy import PermissionPolicy
from covey.runtime.spec import AgentSpec, RunSettings
from tests.hooks.scripts import answer, py_hook

EVENTS = ("StopFailure", "PostToolBatch", "InstructionsLoaded", "WorktreeCreate", "WorktreeRemove", "Interrupt")


def _recorder(tmp_path: Path, out: Path) -> str:
    """A hook that appends each payload to ``out``, one JSON per line."""
    return py_hook(tmp_path, f"record-{out.stem}", f"open({str(out)!r}, 'a').write(json.dumps(json.load(sys.stdin)) + '\\n')\n")


def _payloads(out: Path) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def _spec(tmp_path: Path, hooks: dict, *, prelude: list | None = None) -> AgentSpec:
    return AgentSpec(
        session_id="s-occ", agent_id="a-main", definition=AgentDefinition(name="main", description="main"),
        prompt="go", model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=["Read", "Glob"], max_turns=5,
        transcript_dir=str(tmp_path / "t"), permissions=PermissionPolicy(mode="bypassPermissions", project_root=tmp_path),
        settings=RunSettings(hooks=hooks), prelude=prelude or [],
    )


async def _run(spec: AgentSpec, model: ScriptedModel) -> list:
    return [event async for event in run_agent(spec, AgentServices(model=model))]


def test_the_events_are_read_without_a_warning():
    raw = {event: [{"hooks": [{"type": "command", "command": "true"}]}] for event in EVENTS}
    parsed = read_hooks(raw, "settings.json")
    assert parsed.warnings == [] and set(parsed.config) == set(EVENTS)


async def test_stop_failure_fires_with_the_error_kind_when_an_api_error_ends_the_turn(tmp_path):
    out = tmp_path / "stop_failure.jsonl"
    hooks = {"StopFailure": [{"matcher": "rate_limit", "hooks": [{"type": "command", "command": _recorder(tmp_path, out)}]}]}
    error = ModelAPIError("rate limited", status_code=429, payload={"type": "error", "error": {"type": "rate_limit_error"}})
    events = await _run(_spec(tmp_path, hooks), ScriptedModel.from_turns([error]))
    assert events[-1].terminal_reason == "api_error"
    [payload] = _payloads(out)
    assert payload["hook_event_name"] == "StopFailure" and payload["error"] == "rate_limit"
    assert payload["error_details"].startswith("API Error: 429") and "last_assistant_message" in payload


async def test_stop_failure_does_not_fire_on_a_turn_that_ends_well(tmp_path):
    out = tmp_path / "stop_failure.jsonl"
    hooks = {"StopFailure": [{"hooks": [{"type": "command", "command": _recorder(tmp_path, out)}]}]}
    await _run(_spec(tmp_path, hooks), ScriptedModel.from_turns([{"text": "fine"}]))
    assert _payloads(out) == []


async def test_post_tool_batch_fires_once_per_reply_and_its_context_reaches_the_model(tmp_path):
    out = tmp_path / "batch.jsonl"
    (tmp_path / "a.txt").write_text("alpha")
    context = {"hookSpecificOutput": {"hookEventName": "PostToolBatch", "additionalContext": "BATCH-NOTE"}}
    hooks = {"PostToolBatch": [{"hooks": [{"type": "command", "command": _recorder(tmp_path, out)},
                                          {"type": "command", "command": answer(tmp_path, "ctx", context)}]}]}
    model = ScriptedModel.from_turns([
        {"tool_use": [{"name": "Read", "input": {"file_path": str(tmp_path / "a.txt")}},
                      {"name": "Glob", "input": {"pattern": "*.txt"}}]},
        {"text": "done"},
    ])
    await _run(_spec(tmp_path, hooks), model)
    [payload] = _payloads(out)
    assert payload["hook_event_name"] == "PostToolBatch"
    assert [c["tool_name"] for c in payload["tool_calls"]] == ["Read", "Glob"]
    assert all({"tool_input", "tool_use_id", "tool_response"} <= set(c) for c in payload["tool_calls"])
    assert "alpha" in json.dumps(payload["tool_calls"][0]["tool_response"])
    last_request = model.requests[-1].messages[-1]["content"]
    assert (last_request[-1]["type"], last_request[-1]["text"]) == ("text", "BATCH-NOTE")
    assert [block["type"] for block in last_request[:-1]] == ["tool_result", "tool_result"]  # the note comes after them


async def test_instructions_loaded_fires_for_each_instructions_file_at_the_main_agents_start(tmp_path):
    from covey.definitions.context import project_context

    (tmp_path / "CLAUDE.md").write_text("Be brief.")
    (tmp_path / "AGENTS.md").write_text("Use tabs.")
    out = tmp_path / "loaded.jsonl"
    hooks = {"InstructionsLoaded": [{"matcher": "session_start",
                                     "hooks": [{"type": "command", "command": _recorder(tmp_path, out)}]}]}
    spec = _spec(tmp_path, hooks, prelude=project_context(tmp_path, omit=False))
    await _run(spec, ScriptedModel.from_turns([{"text": "ok"}]))
    payloads = _payloads(out)
    assert [p["file_path"] for p in payloads] == [str(tmp_path / "CLAUDE.md"), str(tmp_path / "AGENTS.md")]
    assert {(p["memory_type"], p["load_reason"], p["hook_event_name"]) for p in payloads} == {
        ("Project", "session_start", "InstructionsLoaded")}


async def test_interrupt_hooks_get_the_fields_the_ts_sdk_sends(tmp_path):
    out = tmp_path / "interrupt.jsonl"
    hooks = HookRegistry({"Interrupt": [{"hooks": [{"type": "command", "command": _recorder(tmp_path, out)}]}]},
                         project_dir=tmp_path, session_id="s-1")
    await hooks.run_interrupt()
    [payload] = _payloads(out)
    assert {k: payload[k] for k in ("hook_event_name", "source", "reason", "via", "session_id")} == {
        "hook_event_name": "Interrupt", "source": "user", "reason": "stop", "via": "client", "session_id": "s-1"}


async def test_a_sessions_interrupt_fires_its_interrupt_hooks_while_the_turn_stops(tmp_path):
    from covey.session import Session

    out = tmp_path / "session_interrupt.jsonl"
    hooks = {"Interrupt": [{"hooks": [{"type": "command", "command": _recorder(tmp_path, out)}]}]}
    session = Session(cwd=str(tmp_path), model=ScriptedModel.from_turns([]), env={"HOME": str(tmp_path / "home")},
                      settings={"hooks": hooks})

    class _Main:  # the main agent's actor while a turn runs (no Ray here)
        reason = None

        async def cancel(self, status: str, reason: str) -> bool:
            self.reason = reason
            return True

    main = _Main()
    session.slot.begin(main)  # type: ignore[arg-type]
    assert await session.interrupt() and main.reason == "interrupted by the user"
    [payload] = _payloads(out)
    assert (payload["hook_event_name"], payload["source"], payload["reason"], payload["via"]) == (
        "Interrupt", "user", "stop", "client")
    assert payload["session_id"] == session.session_id
