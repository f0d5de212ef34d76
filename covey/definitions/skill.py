"""One skill as Claude Code reads it: a ``SKILL.md`` folder or a command file (docs/definitions.md#skills).

A personal, project or managed skill is named by its folder (``agent-development``);
its frontmatter ``name`` is only the label shown beside it. A command file is named
by its file name. A plugin's parts are ``plugin:name``, where a plugin skill's
frontmatter ``name`` replaces the folder name. ``description`` defaults to the
body's first paragraph; ``allowed-tools`` (a space- or comma-separated string, or a
list) pre-approves permission rules while the skill is in force.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from covey.common.frontmatter import MAX_DESCRIPTION_CHARS, split_frontmatter

SkillSource = Literal["plugin", "user", "project", "policy"]
SkillKind = Literal["skill", "command"]
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class Skill(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    """What the Skill tool and a definition's ``skills`` call it: folder or file name, ``plugin:name``."""
    description: str
    """When to use it (listed to the model next to the name)."""
    path: Path
    """The ``SKILL.md`` or command file; its body is read when the skill is used, so edits apply."""
    source: SkillSource
    label: str | None = None
    """The frontmatter ``name``: a display label, not what the skill is called."""
    when_to_use: str | None = None
    """Extra trigger text, listed after the description."""
    allowed_tools: list[str] = Field(default_factory=list)
    """Permission rules allowed while the skill is in force (the turn that loaded it)."""
    model_invocable: bool = True
    """False for ``disable-model-invocation: true``: not listed, and the Skill tool refuses it."""
    kind: SkillKind = "skill"
    plugin: str | None = None
    """The plugin it came from."""
    plugin_root: Path | None = None

    @property
    def directory(self) -> Path:
        """``${CLAUDE_SKILL_DIR}``: the folder holding its file."""
        return self.path.parent

    async def instructions(self) -> str:
        text = await asyncio.to_thread(self.path.read_text, encoding="utf-8")
        return split_frontmatter(text)[1].strip()


class SkillFrontmatter(BaseModel):
    """The keys covey uses; the rest (``argument-hint``, ``model``, ``context``...) are ignored."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    name: str | None = None
    description: str | None = Field(None, max_length=MAX_DESCRIPTION_CHARS)
    when_to_use: str | None = Field(None, max_length=MAX_DESCRIPTION_CHARS)
    allowed_tools: list[str] = Field(default_factory=list, alias="allowed-tools")
    disable_model_invocation: bool = Field(default=False, alias="disable-model-invocation")

    @field_validator("name", "description", "when_to_use", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    @field_validator("allowed_tools", mode="before")
    @classmethod
    def _tools(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return split_rules(value)
        return [str(item) for item in value] if isinstance(value, list) else value

    @field_validator("disable_model_invocation", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        text = str(value).strip().lower()
        return True if text in _TRUE else False if text in _FALSE else value


def split_rules(text: str) -> list[str]:
    """``Read Grep Bash(git add *)`` or ``Read, Bash(git:*)``: split at spaces and commas outside parentheses."""
    rules, current, depth = [], "", 0
    for char in f"{text} ":
        depth += (char == "(") - (char == ")")
        if depth > 0 or not (char.isspace() or char == ","):
            current += char
        elif current:
            rules.append(current)
            current = ""
    return rules + [current.strip()] if current.strip() else rules  # an unclosed ``(`` is kept, to be reported


def first_paragraph(body: str) -> str:
    """Claude Code's fallback description: the body's first paragraph (headings' ``#`` dropped)."""
    paragraph = body.strip().split("\n\n", 1)[0] if body.strip() else ""
    return " ".join(line.strip().lstrip("#").strip() for line in paragraph.splitlines()).strip()


def render(skill: Skill, body: str, args: str | None, *, session_id: str = "", project_dir: str = "") -> str:
    """The body with Claude Code's substitutions (``$ARGUMENTS``, ``${CLAUDE_SKILL_DIR}``...)."""
    values = {"$ARGUMENTS": args or "", "${CLAUDE_SKILL_DIR}": str(skill.directory),
              "${CLAUDE_SESSION_ID}": session_id, "${CLAUDE_PROJECT_DIR}": project_dir}
    if skill.plugin_root is not None:
        values["${CLAUDE_PLUGIN_ROOT}"] = str(skill.plugin_root)
    for variable, value in values.items():
        body = body.replace(variable, value)
    return body
