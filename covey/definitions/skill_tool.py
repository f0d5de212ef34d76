"""Skill: the model loads a skill's instructions by name, like Claude Code's Skill tool (docs/definitions.md#skills).

A skill's ``allowed-tools`` become allow rules of the calling agent's policy,
sourced ``skill:<name>``, for the rest of that agent's run (its turn): the
lifecycle drops them when the run ends, as Claude Code clears the grant when the
next user message comes. The instructions stay in the conversation.
"""

from __future__ import annotations

from pydantic import Field

from covey.definitions.skill import Skill as SkillFile, render
from covey.definitions.skill_loader import UnknownSkill, find_skill, skill_message
from covey.errors import UserError
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult

GRANT_SOURCE = "skill:"
"""The source prefix of the allow rules a loaded skill grants."""


class SkillInput(ToolInput):
    skill: str = Field(description='The skill name, e.g. "pdf" or "my-plugin:review".')
    args: str | None = Field(default=None, description="Optional arguments for the skill.")


class SkillTool(Tool):
    name = "Skill"
    background = True
    description = (
        "Load a skill: a set of instructions for a kind of task. When a listed skill fits "
        "the task, call this first and then follow the instructions it returns."
    )
    input_model = SkillInput
    read_only = True

    async def run(self, input: SkillInput, ctx: ToolContext) -> ToolResult:
        try:
            skill = find_skill(input.skill, ctx.services.skills)
        except UnknownSkill as exc:
            return ToolResult.error(str(exc))
        if not skill.model_invocable:
            return ToolResult.error(f"skill {skill.name!r} sets disable-model-invocation: only the user may run it. "
                                    f"Do not carry out its steps another way; ask the user to run /{skill.name}.")
        try:
            body = await skill.instructions()
        except (OSError, UnicodeDecodeError) as exc:
            return ToolResult.error(f"skill {skill.name!r} cannot be read from {str(skill.path)!r}: {exc}")
        granted = _grant(skill, ctx)
        text = render(skill, body, input.args, session_id=ctx.services.session_id or "", project_dir=_project(ctx))
        leftover = input.args if "$ARGUMENTS" not in body else None
        return ToolResult(content=skill_message(skill, text, leftover), data={"skill": skill.name, "granted": granted})


def _grant(skill: SkillFile, ctx: ToolContext) -> list[str]:
    """The skill's ``allowed-tools`` added to the calling agent's policy (none without one)."""
    spec = ctx.services.spec
    policy = getattr(spec, "permissions", None)
    if policy is None or not skill.allowed_tools:
        return []
    granted = []
    for text in skill.allowed_tools:
        try:
            policy.add_rule("allow", text, source=f"{GRANT_SOURCE}{skill.name}")
        except UserError:
            continue  # reported when the skill was loaded
        granted.append(text)
    return granted


def _project(ctx: ToolContext) -> str:
    spec = ctx.services.spec
    settings = getattr(spec, "settings", None)
    return str(getattr(settings, "project_dir", None) or ctx.cwd)
