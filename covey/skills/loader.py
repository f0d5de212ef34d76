"""Skills: folders holding a ``SKILL.md`` (frontmatter ``name`` + ``description``, body = instructions).

Found in ``~/.claude/skills``, ``~/.covey/skills``, ``.claude/skills`` and
``.covey/skills``, later beating earlier (project beats user), and in plugins
as ``<plugin>:<name>``. A bad ``SKILL.md`` is reported with its path and skipped.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from covey.errors import UserError
from covey.frontmatter import split_frontmatter

SkillSource = Literal["plugin", "user", "project"]


class UnknownSkill(UserError):
    """A skill name that resolves to no skill, or to several."""


class Skill(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    """``name`` or, for a plugin's skill, ``plugin:name``."""
    description: str
    """When to use it (shown to the model next to the name)."""
    path: Path
    """The ``SKILL.md`` file; its body is read when the skill is used, so edits apply."""
    source: SkillSource

    async def instructions(self) -> str:
        text = await asyncio.to_thread(self.path.read_text, encoding="utf-8")
        return split_frontmatter(text)[1].strip()


class _Frontmatter(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str | None = Field(default=None, min_length=1)
    description: str = Field(min_length=1)


@dataclass(frozen=True)
class SkillError:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass
class SkillScan:
    skills: dict[str, Skill] = field(default_factory=dict)
    errors: list[SkillError] = field(default_factory=list)


def discover_skills(cwd: Path | str, *, home: Path | str | None = None, plugin_dirs: Iterable[Path | str] = ()) -> SkillScan:
    """Every skill a session in ``cwd`` can use, lowest precedence loaded first."""
    scan, home_dir, project = SkillScan(), Path(home) if home is not None else Path.home(), Path(cwd)
    for plugin in map(Path, plugin_dirs):
        _load_dir(scan, plugin / "skills", "plugin", prefix=f"{plugin.name}:")
    for base, source in ((home_dir, "user"), (project, "project")):
        for folder in (".claude", ".covey"):
            _load_dir(scan, base / folder / "skills", source)
    return scan


def _load_dir(scan: SkillScan, directory: Path, source: SkillSource, *, prefix: str = "") -> None:
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*/SKILL.md")):
        skill = _load_file(scan, path, source, prefix)
        if skill is not None:
            scan.skills[skill.name] = skill


def _load_file(scan: SkillScan, path: Path, source: SkillSource, prefix: str) -> Skill | None:
    try:
        frontmatter, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        meta = _Frontmatter.model_validate(yaml.safe_load(frontmatter or "") or {})
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        scan.errors.append(SkillError(str(path), f"cannot read: {exc}"))
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"]) or "frontmatter"
        scan.errors.append(SkillError(str(path), f"field {where!r}: {problem['msg']}"))
    else:
        name = prefix + (meta.name or path.parent.name)
        return Skill(name=name, description=meta.description, path=path, source=source)
    return None


def find_skill(name: str, skills: Mapping[str, Skill]) -> Skill:
    """Exact name, then ``plugin:name``, then any ``...:name``; each must be unambiguous."""
    if name in skills:
        return skills[name]
    plugin_prefixed = [key for key in skills if key.count(":") == 1 and key.split(":")[1] == name]
    suffixed = [key for key in skills if key.endswith(f":{name}")]
    for candidates in (plugin_prefixed, suffixed):
        if len(candidates) == 1:
            return skills[candidates[0]]
        if candidates:
            raise UnknownSkill(f"skill {name!r} is ambiguous: it could be {', '.join(sorted(candidates))}")
    known = ", ".join(sorted(skills)) or "none"
    raise UnknownSkill(f"unknown skill {name!r}; available skills: {known}")


async def preload_skills(names: Sequence[str], skills: Mapping[str, Skill]) -> list[dict[str, Any]]:
    """One user message per skill, in the order named, to place before the task prompt."""
    found = [find_skill(name, skills) for name in names]  # every name checked before any read
    bodies = await asyncio.gather(*(skill.instructions() for skill in found))
    return [{"role": "user", "content": skill_message(skill, body)} for skill, body in zip(found, bodies)]


def skill_message(skill: Skill, body: str, args: str | None = None) -> str:
    text = (f'<skill name="{skill.name}">\nThe instructions of the skill "{skill.name}" follow; '
            f"apply them to the task.\n\n{body}\n</skill>")
    return f"{text}\n\nARGUMENTS: {args}" if args else text
