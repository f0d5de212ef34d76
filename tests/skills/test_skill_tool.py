from pathlib import Path

from covey.skills import discover_skills
from covey.tools.base import ToolContext, ToolServices
from covey.tools.skill import Skill, SkillInput


def _ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / ".covey" / "skills" / "pdf"
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: pdf\ndescription: PDFs\n---\nUse pdftotext.\n")
    skills = discover_skills(tmp_path, home=tmp_path / "home").skills
    return ToolContext(agent_id="agent-a", cwd=tmp_path, services=ToolServices(skills=skills))


async def test_skill_returns_its_instructions_with_args(tmp_path):
    result = await Skill().run(SkillInput(skill="pdf", args="report.pdf"), _ctx(tmp_path))
    assert not result.is_error and "Use pdftotext." in result.content
    assert result.content.endswith("ARGUMENTS: report.pdf") and result.data == {"skill": "pdf"}


async def test_unknown_skill_lists_the_available_ones(tmp_path):
    result = await Skill().run(SkillInput(skill="docx"), _ctx(tmp_path))
    assert result.is_error and "'docx'" in result.content and "pdf" in result.content


async def test_no_skills_service_is_an_error(tmp_path):
    result = await Skill().run(SkillInput(skill="pdf"), ToolContext(agent_id="a", cwd=tmp_path))
    assert result.is_error and "available skills: none" in result.content


def test_schema_matches_claude_code():
    schema = Skill().schema()["input_schema"]
    assert schema["required"] == ["skill"] and set(schema["properties"]) == {"skill", "args"}
    assert schema.get("additionalProperties") is False
