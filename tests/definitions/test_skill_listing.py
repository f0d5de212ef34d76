"""The skills listing the model sees: Claude Code's attachment shape, in the prelude of agents with Skill."""

from pathlib import Path

from covey.definitions.skill import Skill
from covey.definitions.skill_listing import skill_list_message
from covey.definitions.skill_listing import HEADER, MAX_DESCRIPTION_CHARS


def _skill(name: str, description: str = "d", **fields) -> Skill:
    return Skill(name=name, description=description, path=Path("/s") / name / "SKILL.md", source="project", **fields)


def _text(message: dict) -> str:
    return message["content"][0]["text"]


def test_the_listing_is_a_system_reminder_user_message_with_one_line_per_skill():
    message = skill_list_message({"pdf": _skill("pdf", "Read PDFs."), "acme:lint": _skill("acme:lint", "Lint.")})
    assert message["role"] == "user"
    assert _text(message) == f"<system-reminder>\n{HEADER}\n\n- acme:lint: Lint.\n- pdf: Read PDFs.\n</system-reminder>"
    assert HEADER == "The following skills are available for use with the Skill tool:"


def test_user_only_skills_are_left_out_and_when_to_use_follows_the_description():
    skills = [_skill("deploy", model_invocable=False), _skill("notes", "Take notes.", when_to_use="In meetings.")]
    assert _text(skill_list_message(skills)).count("\n- ") == 1
    assert "- notes: Take notes. In meetings." in _text(skill_list_message(skills))
    assert skill_list_message([_skill("deploy", model_invocable=False)]) is None


def test_a_long_description_is_cut_at_claude_codes_cap():
    line = _text(skill_list_message([_skill("big", "x" * 5000)])).splitlines()[3]
    assert line.startswith("- big: ") and len(line) == len("- big: ") + MAX_DESCRIPTION_CHARS and line.endswith("…")
