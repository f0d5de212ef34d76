"""Skills: reusable instructions in ``SKILL.md`` folders (docs/definitions.md#hooks)."""

from covey.skills.loader import (
    Skill,
    SkillError,
    SkillScan,
    UnknownSkill,
    discover_skills,
    find_skill,
    preload_skills,
    skill_message,
)

__all__ = [
    "Skill",
    "SkillError",
    "SkillScan",
    "UnknownSkill",
    "discover_skills",
    "find_skill",
    "preload_skills",
    "skill_message",
]
