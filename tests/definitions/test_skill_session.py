"""A session's main agent (a Ray actor) loads a skill by its folder name and runs what its allowed-tools grant."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from covey.events import UserEvent
from covey.model.scripted import ScriptedModel
from covey.session import Session

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors

CORPUS = Path(__file__).parents[1] / "data" / "claude_files" / "skills" / "project"


async def test_the_main_agent_loads_agent_development_and_its_grant_lets_git_add_run(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(CORPUS, project)
    model = ScriptedModel.from_turns([
        {"tool_use": [{"name": "Skill", "input": {"skill": "agent-development"}}]},
        {"tool_use": [{"name": "Bash", "input": {"command": "git add notes.md"}}]},
        {"text": "done"},
    ])
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    session = Session(cwd=str(project), env=env, model=model, permission_mode="dontAsk", pool_size=1,
                      transcript_dir=str(tmp_path / "t"), max_turns=5)
    try:
        result = await asyncio.wait_for(session.run("write an agent"), 120)
    finally:
        session.close()
    results = [b for e in result.events if isinstance(e, UserEvent) for b in e.message["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    skill, bash = json.dumps(results[0]), json.dumps(results[1])
    assert "<skill name=\\\"agent-development\\\">" in skill and "Agent development" in skill
    assert "was denied" not in bash  # allowed by the skill's Bash(git add:*), in dontAsk mode
    assert session.policy.decide("Bash", False, "git add notes.md").behavior == "deny"  # the session's own policy: untouched
