"""A hook's ``"continue": false`` ends the agent's run after the step that ran it, as Claude
Code's does: the result says ``terminal_reason: "hook_stopped"`` and no further request is sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from covey.hooks import HookRegistry
from covey.hooks.tool_gate import hook_after, hook_gate
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.model.scripted import ScriptedModel
from covey.tools.base import ToolContext
from covey.tools.glob import Glob
from tests.hooks.scripts import answer

HALT = {"continue": False, "stopReason": "the build is red"}


def _loop(tmp_path: Path, hooks: dict[str, Any], turns: list[dict]) -> tuple[AgentLoop, ScriptedModel]:
    registry = HookRegistry(hooks, project_dir=tmp_path)
    ctx = ToolContext(agent_id="main", cwd=tmp_path)
    model = ScriptedModel.from_turns(turns)

    async def stop_check(text: str) -> str | None:
        outcome = await registry.run_stop("main", subagent=False, last_message=text)
        if outcome.stop:
            registry.halt("Stop", outcome.stop_reason)
        return None

    loop = AgentLoop(model=model, config=LoopConfig(model_id="m", system=[]), halted=lambda: registry.halted,
                     executor=ToolExecutor([Glob()], ctx, gate=hook_gate(registry), after=hook_after(registry)),
                     stop_check=stop_check)
    return loop, model


async def _result(loop: AgentLoop) -> Any:
    return [event async for event in loop.run([{"role": "user", "content": "go"}])][-1]


GLOB = {"tool_use": [{"name": "Glob", "input": {"pattern": "*"}}]}


async def test_a_post_tool_use_hook_that_says_stop_ends_the_run_after_that_call(tmp_path):
    hooks = {"PostToolUse": [{"matcher": "Glob", "hooks": [{"type": "command", "command": answer(tmp_path, "h", HALT)}]}]}
    loop, _ = _loop(tmp_path, hooks, [GLOB, GLOB, {"text": "never"}])
    result = await _result(loop)
    assert (result.subtype, result.is_error, result.terminal_reason) == ("success", False, "hook_stopped")
    assert result.result == "the build is red" and result.num_turns == 1


async def test_a_pre_tool_use_hook_that_says_stop_blocks_the_call_and_ends_the_run(tmp_path):
    hooks = {"PreToolUse": [{"matcher": "Glob", "hooks": [{"type": "command", "command": answer(tmp_path, "h", HALT)}]}]}
    loop, _ = _loop(tmp_path, hooks, [GLOB, {"text": "never"}])
    result = await _result(loop)
    assert result.terminal_reason == "hook_stopped" and result.num_turns == 1
    blocked = loop.messages[-1]["content"][0]
    assert blocked["is_error"] and "blocked by a PreToolUse hook: the build is red" in blocked["content"]


async def test_a_stop_hook_that_says_stop_ends_with_the_answer_and_stop_hook_prevented(tmp_path):
    """Claude Code 2.1.332's terminal reason for it (measured against its bundled CLI)."""
    hooks = {"Stop": [{"hooks": [{"type": "command", "command": answer(tmp_path, "h", HALT)}]}]}
    loop, _ = _loop(tmp_path, hooks, [{"text": "all done"}])
    result = await _result(loop)
    assert (result.result, result.terminal_reason) == ("all done", "stop_hook_prevented")


async def test_without_such_a_hook_the_run_completes(tmp_path):
    loop, _ = _loop(tmp_path, {}, [GLOB, {"text": "done"}])
    result = await _result(loop)
    assert (result.terminal_reason, result.num_turns) == ("completed", 2)


async def test_a_user_prompt_submit_hook_that_says_stop_ends_the_turn_before_any_request(tmp_path):
    """Claude Code 2.1.332: a success that says "Operation stopped by hook: <reason>", no request."""
    from covey.agent.lifecycle import AgentServices, run_agent
    from covey.definitions.definition import AgentDefinition
    from covey.runtime.spec import AgentSpec, RunSettings

    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": answer(tmp_path, "h", HALT)}]}]}
    spec = AgentSpec(session_id="s-1", agent_id="main-1", definition=AgentDefinition(name="main", description="main"),
                     prompt="go", model_id="claude-sonnet-4-6", cwd=str(tmp_path), transcript_dir=str(tmp_path / "t"),
                     settings=RunSettings(hooks=hooks, project_dir=str(tmp_path)))
    model = ScriptedModel.from_turns([{"text": "never"}])
    events = [event async for event in run_agent(spec, AgentServices(model=model))]
    result = events[-1]
    assert (result.subtype, result.is_error, result.num_turns) == ("success", False, 0)
    assert result.result == "Operation stopped by hook: the build is red" and not model.requests


async def test_a_stopped_prompt_is_recorded_with_the_hooks_words_and_a_cleared_sessions_opens_with_clear(tmp_path):
    """As Claude Code records them (and sends them with the next turn): the prompt the person
    typed, then the hook's words as meta; a session /clear started begins with the command."""
    from covey.agent.opening import CLEARED, PromptStopped, opening
    from covey.hooks import HookRegistry as Registry
    from tests.registry.fakes import spec as make_spec

    hooks = Registry({"UserPromptSubmit": [{"hooks": [{"type": "command", "command": answer(tmp_path, "h", HALT)}]}]},
                     project_dir=tmp_path)
    recorded: list[tuple[list, frozenset | None]] = []

    async def record(messages, typed):
        recorded.append((messages, typed))

    spec = make_spec("main", depth=0, session_source="clear").model_copy(update={"prompt": "ship it"})
    try:
        await opening(spec, hooks, record)
        raise AssertionError("the hook stops the prompt")
    except PromptStopped:
        pass
    [(messages, typed)] = recorded
    assert messages[:3] == CLEARED and messages[3] == {"role": "user", "content": "ship it"}
    assert "Operation stopped by hook: the build is red" in messages[4]["content"][0]["text"]
    assert typed == {1, 3}  # the command and the prompt; the caveat, its output and the hook's words are meta
