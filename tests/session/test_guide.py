"""The covey-guide agent knows the user's own configuration (issue: definitions)."""

from covey.agents.definition import AgentDefinition
from covey.session.definitions import session_definitions


def test_the_guide_prompt_lists_the_projects_agents_skills_and_settings(tmp_path):
    (tmp_path / ".claude" / "skills").mkdir(parents=True)
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    extra = AgentDefinition(name="reviewer", description="reviews", prompt="p")
    definitions, _, _ = session_definitions(tmp_path, [extra])
    prompt = definitions["covey-guide"].prompt
    assert "agent reviewer (flag" in prompt
    assert str(tmp_path / ".claude" / "settings.json") in prompt and "skills folder" in prompt
    assert "docs" in prompt
