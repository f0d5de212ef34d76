"""The Agent tool's schema is shaped by configuration."""

import pytest
from pydantic import ValidationError

from covey.subagents.agent_schema import AsyncLaunched, Completed, agent_input_model
from covey.subagents.agent_tool import AgentTool


def _fields(tool: AgentTool) -> set[str]:
    return set(tool.schema()["input_schema"]["properties"])


def test_default_shape_has_claude_codes_fields_and_no_team_fields():
    fields = _fields(AgentTool())
    assert {"description", "prompt", "subagent_type", "model", "run_in_background", "isolation", "cwd"} <= fields
    assert not {"name", "team_name"} & fields
    assert AgentTool().schema()["input_schema"]["required"] == ["description", "prompt"]


def test_disabled_background_tasks_remove_the_field_from_the_schema():
    assert "run_in_background" not in _fields(AgentTool(background=False))


def test_teams_add_name_and_team_name():
    assert {"name", "team_name"} <= _fields(AgentTool(teams=True))


def test_a_field_absent_from_the_schema_is_refused_not_ignored():
    with pytest.raises(ValidationError):
        agent_input_model(background=False).model_validate({"description": "d", "prompt": "p", "run_in_background": True})


def test_the_shape_is_built_once_so_its_bytes_stay_identical():
    assert agent_input_model(background=True) is agent_input_model(background=True)


def test_outputs_are_a_union_tagged_by_status():
    assert Completed(agentId="a", content="c", totalTokens=1, totalToolUseCount=0, totalDurationMs=1,
                     resolvedModel="m").status == "completed"
    assert AsyncLaunched(agentId="a", description="d", prompt="p", resolvedModel="m").status == "async_launched"
