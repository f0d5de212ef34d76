"""The covey-guide agent knows the user's own configuration (issue: definitions)."""

from covey.definitions.definition import AgentDefinition
from covey.definitions.load import session_definitions


def test_the_guide_prompt_lists_the_projects_agents_skills_and_settings(tmp_path):
    (tmp_path / ".claude" / "skills").mkdir(parents=True)
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    extra = AgentDefinition(name="reviewer", description="reviews", prompt="p")
    definitions, _, _ = session_definitions(tmp_path, [extra])
    prompt = definitions["covey-guide"].prompt
    assert "agent reviewer (flag" in prompt
    assert str(tmp_path / ".claude" / "settings.json") in prompt and "skills folder" in prompt
    assert "docs" in prompt


def test_the_guide_is_withheld_from_a_run_an_sdk_program_started(tmp_path):
    for entrypoint in ("sdk-py", "sdk-ts", "sdk-cli"):
        definitions, _, _ = session_definitions(tmp_path, [], env={"CLAUDE_CODE_ENTRYPOINT": entrypoint})
        assert "covey-guide" not in definitions and "general-purpose" in definitions
    for env in ({"CLAUDE_CODE_ENTRYPOINT": "cli"}, {}):
        assert "covey-guide" in session_definitions(tmp_path, [], env=env)[0]


def test_a_users_own_covey_guide_stays_in_an_sdk_run(tmp_path):
    own = AgentDefinition(name="covey-guide", description="mine", prompt="p")
    definitions, _, _ = session_definitions(tmp_path, [own], env={"CLAUDE_CODE_ENTRYPOINT": "sdk-py"})
    assert definitions["covey-guide"].description == "mine"


def test_a_session_started_by_the_sdk_offers_no_guide(tmp_path):
    from covey.model.scripted import ScriptedModel
    from covey.session import Session

    model = ScriptedModel.from_dict({"rules": []})
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CODE_ENTRYPOINT": "sdk-ts"}
    assert "covey-guide" not in Session(cwd=str(tmp_path), model=model, env=env).definitions
    assert "covey-guide" in Session(cwd=str(tmp_path), model=model, env={"HOME": str(tmp_path / "home")}).definitions
