"""An agent run (``run_agent``, no Ray) runs its Bash calls and hooks with its spec's env."""

from __future__ import annotations

import json
import os

from covey.agent.lifecycle import AgentServices, run_agent
from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.runtime.spec import AgentSpec, RunSettings
from tests.hooks.scripts import pre, py_hook


def _spec(tmp_path, settings: RunSettings) -> AgentSpec:
    return AgentSpec(
        session_id="s", agent_id="a-1", definition=AgentDefinition(name="main", description="main"), prompt="go",
        model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=["Bash"], max_turns=3,
        transcript_dir=str(tmp_path / "t"), settings=settings,
    )


async def _tool_results(spec: AgentSpec) -> list[str]:
    model = ScriptedModel.from_turns([
        {"tool_use": [{"name": "Bash", "input": {"command": 'echo "FOO=${FOO:-unset}"'}}]},
        {"text": "done"},
    ])
    events = [event async for event in run_agent(spec, AgentServices(model=model))]
    return [json.dumps(event.message) for event in events if getattr(event, "type", None) == "user"]


async def test_bash_and_hooks_of_a_run_see_its_env_not_this_process(tmp_path, monkeypatch):
    monkeypatch.delenv("FOO", raising=False)
    seen = tmp_path / "hook-saw.txt"
    hook = py_hook(tmp_path, "saw", f"open({str(seen)!r}, 'w').write(os.environ.get('FOO', 'unset'))\n")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "FOO": "bar"}
    results = await _tool_results(_spec(tmp_path, RunSettings(env=env, hooks=pre("Bash", hook))))
    assert any("FOO=bar" in result for result in results)
    assert seen.read_text() == "bar"


async def test_without_an_env_the_run_inherits_this_process(tmp_path, monkeypatch):
    monkeypatch.setenv("FOO", "from-os-environ")
    results = await _tool_results(_spec(tmp_path, RunSettings()))
    assert any("FOO=from-os-environ" in result for result in results)


async def test_a_runs_effort_reaches_its_requests(tmp_path):
    spec = _spec(tmp_path, RunSettings()).model_copy(update={"effort": "medium", "tool_names": []})
    model = ScriptedModel.from_turns([{"text": "done"}])
    [event async for event in run_agent(spec, AgentServices(model=model))]
    assert [request.effort for request in model.requests] == ["medium"]
