"""The skills listing the model sees, in Claude Code's shape (docs/definitions.md#skills).

Claude Code tells the model which skills exist in a ``<system-reminder>`` user
message (an attachment), one ``- name: description`` line each, not in the Skill
tool's description: the tool schema stays byte-stable for the prompt cache when
skills come and go. A skill with ``disable-model-invocation`` is left out; the
description and ``when_to_use`` together are cut at Claude Code's 1,536 characters.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from covey.definitions.skill import Skill

HEADER = "The following skills are available for use with the Skill tool:"
MAX_DESCRIPTION_CHARS = 1536


def listed(skills: Mapping[str, Skill] | Iterable[Skill]) -> list[Skill]:
    """The skills the model may invoke, by name."""
    items = skills.values() if isinstance(skills, Mapping) else skills
    return sorted((s for s in items if s.model_invocable), key=lambda s: s.name)


def skill_line(skill: Skill) -> str:
    text = " ".join(part for part in (skill.description, skill.when_to_use) if part)
    text = " ".join(text.split())
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"
    return f"- {skill.name}: {text}" if text else f"- {skill.name}"


def skill_list_message(skills: Mapping[str, Skill] | Iterable[Skill]) -> dict[str, Any] | None:
    """The listing attachment, or None when there is nothing to list."""
    lines = [skill_line(skill) for skill in listed(skills)]
    if not lines:
        return None
    text = f"<system-reminder>\n{HEADER}\n\n" + "\n".join(lines) + "\n</system-reminder>"
    return {"role": "user", "content": [{"type": "text", "text": text}]}
