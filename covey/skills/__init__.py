"""Skills: ``SKILL.md`` folders and command files, as Claude Code reads them (docs/definitions.md#skills)."""

from covey.skills.listing import skill_list_message
from covey.skills.loader import (
    SkillError,
    SkillScan,
    UnknownSkill,
    discover_skills,
    find_skill,
    preload_skills,
    skill_message,
)
from covey.skills.skill import Skill, render, split_rules

__all__ = [
    "Skill",
    "SkillError",
    "SkillScan",
    "UnknownSkill",
    "discover_skills",
    "find_skill",
    "preload_skills",
    "render",
    "skill_list_message",
    "skill_message",
    "split_rules",
]
