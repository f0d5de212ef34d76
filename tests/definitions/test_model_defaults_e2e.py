"""Model and effort defaults end to end, through the real SDK and the fake Messages API (Ray)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from covey.session import Session
from tests.session.scripts import CHILD, MAIN, agent_call, rule
from tests.session.served import model_for, requests_with, served

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors

QUICK = """---
name: quick
description: Use when: a task is small. Examples:\\n- renaming a file
model: sonnet
effort: low
---
You do small tasks quickly.
"""


async def test_children_inherit_the_parents_model_and_effort_unless_their_definition_says(tmp_path: Path):
    project = tmp_path / "proj"
    (project / ".claude" / "agents" / "small").mkdir(parents=True)
    (project / ".claude" / "agents" / "small" / "quick.md").write_text(QUICK)
    with served(
        rule({**CHILD, "messages_contain": "QUICK_TASK"}, {"text": "quick done"}),
        rule({**CHILD, "messages_contain": "GENERAL_TASK"}, {"text": "general done"}),
        rule({**MAIN, "last_tool_result_contains": "done"}, {"text": "all done"}),
        rule(MAIN, {"tool_use": [agent_call("QUICK_TASK", subagent_type="quick"), agent_call("GENERAL_TASK")]}),
    ) as api:
        env = {**os.environ, "CLAUDE_CODE_EFFORT_LEVEL": "high"}
        env.pop("CLAUDE_CODE_SUBAGENT_MODEL", None)
        env.pop("COVEY_SUBAGENT_MODEL", None)
        session = Session(cwd=str(project), model=model_for(api), model_id="claude-opus-4-8", env=env,
                          transcript_dir=str(tmp_path / "t"), pool_size=2, max_turns=6)
        try:
            result = await asyncio.wait_for(session.run("go"), 120)
        finally:
            session.close()
    assert result.result == "all done"
    main = next(body for body in api.requests if "You are covey" in str(body.get("system")))
    assert (main["model"], main["output_config"]) == ("claude-opus-4-8", {"effort": "high"})
    general = requests_with(api, "GENERAL_TASK")[0]
    assert (general["model"], general["output_config"]) == ("claude-opus-4-8", {"effort": "high"})
    quick = requests_with(api, "QUICK_TASK")[0]
    assert (quick["model"], quick["output_config"]) == ("claude-sonnet-4-6", {"effort": "low"})
