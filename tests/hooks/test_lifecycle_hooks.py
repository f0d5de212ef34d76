"""Where an agent's life fires hooks (``run_agent`` driven directly, no Ray): SessionStart and
SubagentStart context reach the model, a failing tool fires PostToolUseFailure, PermissionRequest
decides a prompt, payloads carry the session's transcript."""

from __future__ import annotations

import json
from pathlib import Path

from covey.agent.lifecycle import AgentServices, run_agent
from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.permissions.policy import PermissionPolicy
from covey.runtime.spec import AgentSpec, RunSettings
from tests.hooks.scripts import answer, dump_stdin, read_json


def _spec(tmp_path: Path, hooks, **extra) -> AgentSpec:
    fields = dict(
        session_id="s-1", agent_id="main-1", definition=AgentDefinition(name="main", description="main"),
        prompt="go", model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=["Bash", "Read"], max_turns=4,
        transcript_dir=str(tmp_path / "t"),
        settings=RunSettings(hooks=hooks, project_dir=str(tmp_path), session_transcript="/session/main.jsonl"),
    )
    return AgentSpec(**{**fields, **extra})


async def _run(spec: AgentSpec, *turns) -> ScriptedModel:
    model = ScriptedModel.from_turns([*turns, {"text": "done"}])
    [event async for event in run_agent(spec, AgentServices(model=model))]
    return model


def _sent(model: ScriptedModel, index: int = 0) -> str:
    return json.dumps(model.requests[index].messages)


def _context(event: str, text: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


async def test_session_start_context_reaches_the_model_before_the_prompt(tmp_path):
    hooks = {"SessionStart": [{"matcher": "startup", "hooks": [
        {"type": "command", "command": answer(tmp_path, "s", _context("SessionStart", "branch feat/auth"))}]}]}
    model = await _run(_spec(tmp_path, hooks))
    messages = model.requests[0].messages
    assert "SessionStart hook additional context: branch feat/auth" in json.dumps(messages[-2])
    assert '"go"' in json.dumps(messages[-1]) and "SessionStart" not in json.dumps(messages[-1])


async def test_a_resumed_session_fires_session_start_as_resume(tmp_path):
    startup, resume = tmp_path / "startup.json", tmp_path / "resume.json"
    hooks = {"SessionStart": [
        {"matcher": "startup", "hooks": [{"type": "command", "command": dump_stdin(tmp_path, "s", startup)}]},
        {"matcher": "resume", "hooks": [
            {"type": "command", "command": dump_stdin(tmp_path, "r", resume)},
            {"type": "command", "command": answer(tmp_path, "c", _context("SessionStart", "3 new commits"))}]},
    ]}
    history = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    spec = _spec(tmp_path, hooks, history=history, next_prompt="and now?", session_source="resume")
    model = await _run(spec)
    assert not startup.exists() and read_json(resume)["payload"]["source"] == "resume"
    messages = model.requests[0].messages
    assert "SessionStart hook additional context: 3 new commits" in json.dumps(messages[-2])
    assert "and now?" in json.dumps(messages[-1])


async def test_a_later_turn_of_a_conversation_fires_no_session_start(tmp_path):
    out = tmp_path / "start.json"
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": dump_stdin(tmp_path, "s", out)}]}]}
    history = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    await _run(_spec(tmp_path, hooks, history=history, next_prompt="next"))
    assert not out.exists()


async def test_subagent_start_fires_for_a_child_with_its_type_and_its_context_reaches_the_child(tmp_path):
    out = tmp_path / "start.json"
    hooks = {"SubagentStart": [{"matcher": "reviewer", "hooks": [
        {"type": "command", "command": dump_stdin(tmp_path, "d", out)},
        {"type": "command", "command": answer(tmp_path, "c", _context("SubagentStart", "use camelCase"))}]}]}
    child = _spec(tmp_path, hooks, agent_id="agent-9", depth=1, parent_agent_id="main-1",
                  definition=AgentDefinition(name="reviewer", description="reviews"))
    model = await _run(child)
    payload = read_json(out)["payload"]
    assert payload["hook_event_name"] == "SubagentStart"
    assert (payload["agent_id"], payload["agent_type"]) == ("agent-9", "reviewer")
    assert payload["transcript_path"] == "/session/main.jsonl"
    assert "SubagentStart hook additional context: use camelCase" in _sent(model)


async def test_a_childs_stop_carries_both_transcripts(tmp_path):
    out = tmp_path / "stop.json"
    hooks = {"SubagentStop": [{"hooks": [{"type": "command", "command": dump_stdin(tmp_path, "d", out)}]}],
             "PreToolUse": [{"hooks": [{"type": "command", "command": dump_stdin(tmp_path, "p", tmp_path / "pre.json")}]}]}
    child = _spec(tmp_path, hooks, agent_id="agent-9", depth=1, definition=AgentDefinition(name="Explore", description="x"))
    await _run(child, {"tool_use": [{"name": "Bash", "input": {"command": "true"}}]})
    payload = read_json(out)["payload"]
    assert payload["transcript_path"] == "/session/main.jsonl"
    assert payload["agent_transcript_path"].endswith("agent-9.jsonl") and payload["agent_type"] == "Explore"
    pre = read_json(tmp_path / "pre.json")["payload"]
    assert (pre["agent_id"], pre["agent_type"], pre["transcript_path"]) == ("agent-9", "Explore", "/session/main.jsonl")


async def test_a_failing_tool_fires_post_tool_use_failure_and_its_context_reaches_the_model(tmp_path):
    out, success = tmp_path / "fail.json", tmp_path / "ok.json"
    hooks = {"PostToolUseFailure": [{"matcher": "Read", "hooks": [
        {"type": "command", "command": dump_stdin(tmp_path, "d", out)},
        {"type": "command", "command": answer(tmp_path, "c", _context("PostToolUseFailure", "check the path"))}]}],
        "PostToolUse": [{"hooks": [{"type": "command", "command": dump_stdin(tmp_path, "ok", success)}]}]}
    missing = str(tmp_path / "nope.txt")
    model = await _run(_spec(tmp_path, hooks), {"tool_use": [{"name": "Read", "input": {"file_path": missing}}]})
    payload = read_json(out)["payload"]
    assert payload["tool_name"] == "Read" and payload["error"] and payload["is_interrupt"] is False
    assert not success.exists()  # a failure is not a success
    assert "check the path" in _sent(model, 1)


async def test_permission_request_allow_answers_the_prompt(tmp_path):
    marker = tmp_path / "ran"
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    hooks = {"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": answer(tmp_path, "a", allow)}]}]}
    # Nobody could be asked: without the hook the call would be denied.
    policy = PermissionPolicy(mode="default", project_root=tmp_path)
    model = await _run(_spec(tmp_path, hooks, permissions=policy),
                       {"tool_use": [{"name": "Bash", "input": {"command": f"touch {marker}"}}]})
    assert marker.exists() and "denied" not in _sent(model, 1)


async def test_permission_request_deny_refuses_with_its_message(tmp_path):
    marker = tmp_path / "ran"
    deny = {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                   "decision": {"behavior": "deny", "message": "no writes on Fridays"}}}
    hooks = {"PermissionRequest": [{"hooks": [{"type": "command", "command": answer(tmp_path, "d", deny)}]}]}

    async def person(request):  # the hook answers first: the person is never asked
        raise AssertionError("asked")

    policy = PermissionPolicy(mode="default", project_root=tmp_path, asker=person)
    model = await _run(_spec(tmp_path, hooks, permissions=policy),
                       {"tool_use": [{"name": "Bash", "input": {"command": f"touch {marker}"}}]})
    assert not marker.exists() and "no writes on Fridays" in _sent(model, 1)


async def test_permission_request_does_not_run_when_no_prompt_would_be_shown(tmp_path):
    out = tmp_path / "req.json"
    hooks = {"PermissionRequest": [{"hooks": [{"type": "command", "command": dump_stdin(tmp_path, "d", out)}]}]}
    policy = PermissionPolicy(mode="bypassPermissions", project_root=tmp_path)
    await _run(_spec(tmp_path, hooks, permissions=policy), {"tool_use": [{"name": "Bash", "input": {"command": "true"}}]})
    assert not out.exists()


async def test_session_start_hooks_persist_variables_for_bash_through_claude_env_file(tmp_path):
    writes = "echo 'export GREETING=hello-from-hook' >> \"$CLAUDE_ENV_FILE\""
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": writes}]}]}
    model = await _run(_spec(tmp_path, hooks), {"tool_use": [{"name": "Bash", "input": {"command": "echo $GREETING"}}]})
    assert "hello-from-hook" in _sent(model, 1)
