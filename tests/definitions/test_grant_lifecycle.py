"""An agent run (``run_agent``, no Ray): a loaded skill's allowed-tools hold for the rest of the run, then go."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

from covey.agent.lifecycle import AgentServices, run_agent
from covey.definitions.definition import AgentDefinition
from covey.definitions.skill_loader import discover_skills
from covey.model.scripted import ScriptedModel
from covey.permissions.policy import PermissionPolicy
from covey.runtime.spec import AgentSpec

CORPUS = Path(__file__).parents[1] / "data" / "claude_files" / "skills" / "project"


def _spec(project: Path, policy: PermissionPolicy) -> AgentSpec:
    skills = discover_skills(project, home=project / "home").skills
    return AgentSpec(
        session_id="s", agent_id="a-1", definition=AgentDefinition(name="main", description="main"), prompt="go",
        model_id="claude-sonnet-4-6", cwd=str(project), tool_names=["Skill", "Bash"], max_turns=4,
        transcript_dir=str(project / "t"), permissions=policy, runtime=SimpleNamespace(skills=skills, tools=None),
    )


async def _bash_result(spec: AgentSpec, load_skill: bool) -> str:
    turns = [{"tool_use": [{"name": "Skill", "input": {"skill": "agent-development"}}]}] if load_skill else []
    turns += [{"tool_use": [{"name": "Bash", "input": {"command": "git add notes.md"}}]}, {"text": "done"}]
    events = [e async for e in run_agent(spec, AgentServices(model=ScriptedModel.from_turns(turns)))]
    results = [b for e in events if getattr(e, "type", None) == "user" for b in e.message["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    return json.dumps(results[-1])


async def test_the_grant_allows_the_skills_tools_for_the_run_and_is_gone_after_it(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(CORPUS, project)
    policy = PermissionPolicy(mode="dontAsk", project_root=project)
    ran = await _bash_result(_spec(project, policy), load_skill=True)
    assert "was denied" not in ran and "Exit code" in ran  # git itself ran (the project is no repository)
    assert all(not rule.source.startswith("skill:") for rules in policy.rules.values() for rule in rules)
    assert "was denied" in await _bash_result(_spec(project, policy), load_skill=False)
    assert policy.decide("Bash", False, "git add notes.md").behavior == "deny"
