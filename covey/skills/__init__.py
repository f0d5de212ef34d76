"""Skills: reusable instructions in ``SKILL.md`` folders (SPEC 15)."""

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
