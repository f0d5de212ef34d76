"""Skill: the model loads a skill's instructions by name, like Claude Code's Skill tool."""

from __future__ import annotations

from pydantic import Field

from covey.skills.loader import UnknownSkill, find_skill, skill_message
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult


class SkillInput(ToolInput):
    skill: str = Field(description='The skill name, e.g. "pdf" or "my-plugin:review".')
    args: str | None = Field(default=None, description="Optional arguments for the skill.")


class Skill(Tool):
    name = "Skill"
    description = (
        "Load a skill: a set of instructions for a kind of task. When a listed skill fits "
        "the task, call this first and then follow the instructions it returns."
    )
    input_model = SkillInput
    read_only = True

    async def run(self, input: SkillInput, ctx: ToolContext) -> ToolResult:
        skills = ctx.services.skills
        try:
            skill = find_skill(input.skill, skills)
        except UnknownSkill as exc:
            return ToolResult.error(str(exc))
        try:
            body = await skill.instructions()
        except (OSError, UnicodeDecodeError) as exc:
            return ToolResult.error(f"skill {skill.name!r} cannot be read from {str(skill.path)!r}: {exc}")
        return ToolResult(content=skill_message(skill, body, input.args), data={"skill": skill.name})
