"""The SkillTool tool: loads a skill by its folder name, renders it, and grants its allowed-tools for the turn."""

import shutil
from pathlib import Path

from covey.definitions.skill_loader import discover_skills
from covey.definitions.skill_tool import GRANT_SOURCE, SkillTool, SkillInput
from covey.permissions.policy import PermissionPolicy
from covey.tools.base import ToolContext, ToolServices

CORPUS = Path(__file__).parents[1] / "data" / "claude_files" / "skills" / "project"


class _Spec:
    def __init__(self, policy):
        self.permissions = policy


def _ctx(tmp_path: Path, policy=None) -> ToolContext:
    root = tmp_path / ".covey" / "skills" / "pdf"
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: pdf\ndescription: PDFs\n---\nUse pdftotext.\n")
    skills = discover_skills(tmp_path, home=tmp_path / "home").skills
    return ToolContext(agent_id="agent-a", cwd=tmp_path, services=ToolServices(skills=skills, spec=_Spec(policy)))


def _corpus_ctx(tmp_path: Path, policy=None) -> ToolContext:
    project = tmp_path / "project"
    shutil.copytree(CORPUS, project)
    skills = discover_skills(project, home=tmp_path / "home").skills
    return ToolContext(agent_id="a", cwd=project, services=ToolServices(skills=skills, spec=_Spec(policy),
                                                                        session_id="sess-1"))


async def test_skill_returns_its_instructions_with_args(tmp_path):
    result = await SkillTool().run(SkillInput(skill="pdf", args="report.pdf"), _ctx(tmp_path))
    assert not result.is_error and "Use pdftotext." in result.content
    assert result.content.endswith("ARGUMENTS: report.pdf") and result.data["skill"] == "pdf"


async def test_arguments_and_the_skill_dir_are_substituted(tmp_path):
    ctx = _corpus_ctx(tmp_path)
    result = await SkillTool().run(SkillInput(skill="render-chart", args="sales.csv"), ctx)
    script = ctx.cwd / ".claude" / "skills" / "render-chart" / "scripts" / "render.sh"
    assert f"Run `{script} <csv-file>` to render the chart for sales.csv." in result.content
    assert "ARGUMENTS:" not in result.content  # $ARGUMENTS took them


async def test_loading_a_skill_grants_its_allowed_tools_to_the_calling_agent(tmp_path):
    policy = PermissionPolicy(mode="dontAsk", project_root=tmp_path)
    # ``git add`` writes, so no read-only rule lets it run (``git status`` would run anyway).
    assert policy.decide("Bash", False, "git add notes.md").behavior == "deny"
    result = await SkillTool().run(SkillInput(skill="agent-development"), _corpus_ctx(tmp_path, policy))
    assert result.data["granted"] == ["Read", "Write", "Bash(git add:*)", "Bash(git status)"]
    allowed = policy.decide("Bash", False, "git add notes.md")
    assert allowed.behavior == "allow" and allowed.source == f"{GRANT_SOURCE}agent-development"
    assert policy.decide("Bash", False, "git push").behavior == "deny"  # only what the skill lists
    policy.drop_rules(GRANT_SOURCE)  # what the lifecycle does when the agent's run ends
    assert policy.decide("Bash", False, "git add notes.md").behavior == "deny"


async def test_a_user_only_skill_is_refused(tmp_path):
    result = await SkillTool().run(SkillInput(skill="deploy"), _corpus_ctx(tmp_path))
    assert result.is_error and "disable-model-invocation" in result.content and "/deploy" in result.content


async def test_unknown_skill_lists_the_available_ones(tmp_path):
    result = await SkillTool().run(SkillInput(skill="docx"), _ctx(tmp_path))
    assert result.is_error and "'docx'" in result.content and "pdf" in result.content


async def test_no_skills_service_is_an_error(tmp_path):
    result = await SkillTool().run(SkillInput(skill="pdf"), ToolContext(agent_id="a", cwd=tmp_path))
    assert result.is_error and "available skills: none" in result.content


def test_schema_matches_claude_code():
    schema = SkillTool().schema()["input_schema"]
    assert schema["required"] == ["skill"] and set(schema["properties"]) == {"skill", "args"}
    assert schema.get("additionalProperties") is False
