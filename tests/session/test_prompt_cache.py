"""The Agent tool's description is static: the agent list travels as a message."""

from __future__ import annotations

import hashlib
import json

from covey.agent.actor import AgentRunner
from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.session import Session


def _digest(tools) -> str:
    return hashlib.sha256(json.dumps(tools, sort_keys=True).encode()).hexdigest()


async def test_adding_an_agent_type_changes_no_byte_of_the_tools_array(tmp_path):
    extra = AgentDefinition(name="newcomer", description="NEWCOMER_MARKER", prompt="p")
    runner_model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "done"}}]})
    before = Session(cwd=str(tmp_path), model=runner_model).main_spec("go", runtime=None)
    after = Session(cwd=str(tmp_path), model=runner_model, agents=[extra]).main_spec("go", runtime=None)
    assert "NEWCOMER_MARKER" in json.dumps(after.prelude) and "NEWCOMER_MARKER" not in json.dumps(before.prelude)

    requests = []
    for spec in (before, after):
        model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "done"}}]})
        runner = AgentRunner()
        await runner.start(spec.model_copy(update={"model": model, "transcript_dir": str(tmp_path / "t")}))
        await runner.wait()
        requests.append(model.requests[0])
    assert _digest(requests[0].tools) == _digest(requests[1].tools)
    assert "Agent" in [t["name"] for t in requests[0].tools]
    agent_tool = next(t for t in requests[1].tools if t["name"] == "Agent")
    assert "newcomer" not in json.dumps(agent_tool) and "Explore" not in agent_tool["description"]
