"""Finding the skills a session offers, as Claude Code finds them (docs/definitions.md#skills).

Personal skills (``~/.claude/skills``, ``~/.covey/skills``) beat project ones
(``.claude/skills``, ``.covey/skills``), and managed ones (``<managed>/.claude/skills``)
beat both; a skill beats a command (``commands/*.md``) of the same name. A plugin's
skills and commands are ``plugin:name``, so they never clash with the others. Under a
managed ``strictPluginOnlyCustomization`` that locks ``skills``, personal and project
skills and commands are not loaded. A bad file is reported with its path and skipped.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Iterable, Mapping, Sequence

import yaml
from pydantic import ValidationError

from covey.common.frontmatter import TooLarge, read_definition_text, split_frontmatter
from covey.common.safe_files import reason
from covey.common.safe_yaml import DuplicateKey, load_yaml
from covey.definitions.skill import Skill, SkillFrontmatter, SkillKind, SkillSource, first_paragraph
from covey.errors import UserError
from covey.permissions.rules import parse_rule
from covey.plugins.plugin import Plugin, read_plugin
from covey.settings.files import Sources, reads
from covey.trust import SetAside


class UnknownSkill(UserError):
    """A skill name that resolves to no skill, or to several."""


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


@dataclass(frozen=True)
class _Place:
    source: SkillSource
    kind: SkillKind
    plugin: Plugin | None = None


def discover_skills(
    cwd: Path | str, *, home: Path | str | None = None, plugins: Iterable[Plugin] = (),
    plugin_dirs: Iterable[Path | str] = (), managed_dir: Path | str | None = None, locked: Collection[str] = (),
    sources: Sources = None, aside: SetAside | None = None,
) -> SkillScan:
    """Every skill a session in ``cwd`` can use, lowest precedence loaded first; ``sources``: the
    kinds of file read (``--setting-sources``: personal and project skills and commands; None: both);
    ``aside``: the folder is not trusted, so its skills' ``allowed-tools`` are set aside there."""
    scan, home_dir, project = SkillScan(), Path(home) if home is not None else Path.home(), Path(cwd).resolve()
    loader = _Loader(scan, project, aside)
    if "skills" not in locked:
        every: tuple[tuple[Path, SkillSource], ...] = ((project, "project"), (home_dir, "user"))
        places = [(base, source) for base, source in every if reads(sources, source)]
        for base, source in places:
            for folder in (".claude", ".covey"):
                loader.commands(base / folder / "commands", _Place(source, "command"))
        for base, source in places:
            for folder in (".claude", ".covey"):
                loader.skills(base / folder / "skills", _Place(source, "skill"))
    if managed_dir is not None:
        loader.skills(Path(managed_dir) / ".claude" / "skills", _Place("policy", "skill"))
    extra = [read_plugin(d, "--plugin-dir").plugin for d in plugin_dirs]
    for plugin in [*plugins, *(p for p in extra if p is not None)]:
        loader.plugin(plugin)
    return scan


class _Loader:
    def __init__(self, scan: SkillScan, project: Path, aside: SetAside | None = None) -> None:
        self.scan, self.project, self.aside = scan, project, aside

    def skills(self, directory: Path, place: _Place) -> None:
        if directory.is_dir():
            for path in sorted(directory.glob("*/SKILL.md")):
                self._add(path, place, path.parent.name)

    def commands(self, directory: Path, place: _Place) -> None:
        """``*.md`` files, subfolders included; a plugin's subfolders are name segments."""
        files = [directory] if directory.is_file() else sorted(directory.rglob("*.md")) if directory.is_dir() else []
        for path in files:
            parts = path.relative_to(directory).with_suffix("").parts if path != directory else (path.stem,)
            self._add(path, place, ":".join(parts) if place.plugin else path.stem)

    def plugin(self, plugin: Plugin) -> None:
        for path in plugin.command_paths:
            self.commands(path, _Place("plugin", "command", plugin))
        for directory in plugin.skill_dirs:
            self.skills(directory, _Place("plugin", "skill", plugin))
        if plugin.root_skill is not None:
            self._add(plugin.root_skill, _Place("plugin", "skill", plugin), plugin.root.name)

    def _add(self, path: Path, place: _Place, folder_name: str) -> None:
        skill = self._load(path, place, folder_name)
        if skill is not None:
            self.scan.skills[skill.name] = skill

    def _load(self, path: Path, place: _Place, folder_name: str) -> Skill | None:
        try:
            frontmatter, body = split_frontmatter(read_definition_text(path))
            meta = SkillFrontmatter.model_validate(load_yaml(frontmatter or "") or {})
        except TooLarge as exc:
            self._error(path, str(exc))
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self._error(path, f"cannot read: {reason(exc)}")
            return None
        except yaml.YAMLError as exc:
            self._error(path, f"field {exc.key if isinstance(exc, DuplicateKey) else 'frontmatter'!r}: {reason(exc)}")
            return None
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"]) or "frontmatter"
            self._error(path, f"field {where!r}: {problem['msg']}")
            return None
        plugin = place.plugin
        if self.aside is not None and place.source == "project" and meta.allowed_tools:
            self.aside.add("allowed-tools", str(path))  # an untrusted folder's skill grants nothing
            meta = meta.model_copy(update={"allowed_tools": []})
        return Skill(
            name=_name(meta, place, folder_name), description=meta.description or first_paragraph(body), path=path,
            source=place.source, label=meta.name, when_to_use=meta.when_to_use,
            allowed_tools=self._rules(meta.allowed_tools, path, plugin), model_invocable=not meta.disable_model_invocation,
            kind=place.kind, plugin=plugin.name if plugin else None, plugin_root=plugin.root if plugin else None,
        )

    def _rules(self, texts: list[str], path: Path, plugin: Plugin | None) -> list[str]:
        """Each ``allowed-tools`` entry with Claude Code's variables filled in; a bad rule is reported and dropped."""
        values = {"${CLAUDE_SKILL_DIR}": str(path.parent), "${CLAUDE_PROJECT_DIR}": str(self.project)}
        if plugin is not None:
            values["${CLAUDE_PLUGIN_ROOT}"] = str(plugin.root)
        rules = []
        for text in texts:
            for variable, value in values.items():
                text = text.replace(variable, value)
            try:
                parse_rule(text)
            except UserError as exc:
                self._error(path, f"allowed-tools: {text!r} is not a permission rule ({exc}); that entry skipped")
                continue
            rules.append(text)
        return rules

    def _error(self, path: Path, message: str) -> None:
        self.scan.errors.append(SkillError(str(path), message))


def _name(meta: SkillFrontmatter, place: _Place, folder_name: str) -> str:
    """Folder or file name; in a plugin, ``plugin:`` + the frontmatter ``name`` (a skill's) or that name."""
    if place.plugin is None:
        return folder_name
    prefix = f"{place.plugin.name}:"
    last = meta.name if place.kind == "skill" and meta.name else folder_name
    return last if last.startswith(prefix) else prefix + last


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
    for skill in found:
        if not skill.model_invocable:
            raise UnknownSkill(f"skill {skill.name!r} sets disable-model-invocation: only a person may invoke it, "
                               f"so it cannot be preloaded ({skill.path})")
    bodies = await asyncio.gather(*(skill.instructions() for skill in found))
    return [{"role": "user", "content": skill_message(skill, body)} for skill, body in zip(found, bodies)]


def skill_message(skill: Skill, body: str, args: str | None = None) -> str:
    text = (f'<skill name="{skill.name}">\nThe instructions of the skill "{skill.name}" follow; '
            f"apply them to the task.\n\n{body}\n</skill>")
    return f"{text}\n\nARGUMENTS: {args}" if args else text
