"""One plugin folder read into a ``Plugin``: its name, where it came from, and its parts.

Paths in the manifest are relative to the plugin's root (``./agents/x.md``) and
may not leave it; ``agents`` and ``commands`` replace their default folders,
``skills`` and ``hooks`` add to theirs, as in Claude Code's plugins reference.
Hook commands get ``${CLAUDE_PLUGIN_ROOT}`` expanded (and exported to the
command's shell), so a plugin's scripts are found wherever it is installed.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from covey.common.safe_files import READ_ERRORS, read_json, reason
from covey.hooks.read import HookConfigError, read_hooks
from covey.plugins.manifest import MANIFEST, ManifestError, PluginManifest, as_list, read_manifest

ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"


@dataclass(frozen=True)
class PluginProblem:
    """Something in a plugin covey could not use: where, and why."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class Plugin(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    """The namespace of its parts: ``name:agent``, ``name:skill``."""
    root: Path
    origin: str
    """How the session got it: ``--plugin-dir`` or ``enabledPlugins "x@market" (file)``."""
    version: str | None = None
    description: str | None = None
    agent_paths: list[Path] = Field(default_factory=list)
    """Agent files and folders (folders are walked; a subfolder adds a name segment)."""
    skill_dirs: list[Path] = Field(default_factory=list)
    """Folders holding ``<skill>/SKILL.md``."""
    command_paths: list[Path] = Field(default_factory=list)
    """Command files and folders (``*.md``; each is a skill named after its file)."""
    root_skill: Path | None = None
    """A single-skill plugin's ``SKILL.md`` at its root."""
    hooks: dict[str, Any] = Field(default_factory=dict)
    """Its hooks, validated, ``${CLAUDE_PLUGIN_ROOT}`` expanded."""
    hook_sources: list[str] = Field(default_factory=list)
    """Where its hooks came from (files, or ``plugin.json``)."""
    plugin_id: str = ""
    """``name@marketplace`` for an enabled plugin, ``name@inline`` for a ``--plugin-dir`` one."""

    def init_entry(self) -> dict[str, str]:
        """The plugin as Claude Code's ``system/init`` event lists it."""
        return {"name": self.name, "path": str(self.root), "source": self.plugin_id or f"{self.name}@inline"}


@dataclass
class PluginRead:
    plugin: Plugin | None = None
    problems: list[PluginProblem] = field(default_factory=list)


def read_plugin(root: Path | str, origin: str, name: str | None = None) -> PluginRead:
    """The plugin at ``root``; a bad manifest skips the plugin, a bad part skips that part.
    ``name``: its name when it has no manifest (an installed plugin's, from ``name@marketplace``)."""
    root, read = Path(root).resolve(), PluginRead()
    if not root.is_dir():
        read.problems.append(PluginProblem(str(root), f"{origin}: not a folder; plugin not loaded"))
        return read
    try:
        manifest = read_manifest(root, name)
    except ManifestError as exc:
        read.problems.append(PluginProblem(exc.path, f"{exc.message}; plugin not loaded"))
        return read
    paths = _Paths(root, read.problems)
    skill_dirs = [p for p in [root / "skills", *paths.listed(manifest.skills, "skills")] if p.is_dir()]
    hooks, sources = _hooks(root, manifest, paths, read.problems)
    read.plugin = Plugin(
        name=manifest.name, root=root, origin=origin, version=manifest.version, description=manifest.description,
        agent_paths=paths.replacing(manifest.agents, "agents"), skill_dirs=_unique(skill_dirs),
        command_paths=paths.replacing(manifest.commands, "commands"), root_skill=_root_skill(root, manifest),
        hooks=hooks, hook_sources=sources,
    )
    return read


class _Paths:
    """Manifest path fields resolved inside the plugin; a path that leaves it is a problem."""

    def __init__(self, root: Path, problems: list[PluginProblem]) -> None:
        self.root, self.problems = root, problems

    def listed(self, value: Any, field_name: str) -> list[Path]:
        found = []
        for text in as_list(value):
            path = (self.root / text).resolve()
            if not path.is_relative_to(self.root):
                self._problem(field_name, f"{text!r} is outside the plugin; skipped")
            elif not path.exists():
                self._problem(field_name, f"{text!r} does not exist; skipped")
            else:
                found.append(path)
        return found

    def replacing(self, value: Any, default: str) -> list[Path]:
        if value is not None:
            return _unique(self.listed(value, default))
        return [self.root / default] if (self.root / default).is_dir() else []

    def _problem(self, field_name: str, message: str) -> None:
        self.problems.append(PluginProblem(str(self.root / MANIFEST), f"field {field_name!r}: {message}"))


def _root_skill(root: Path, manifest: PluginManifest) -> Path | None:
    """Claude Code loads a root ``SKILL.md`` as the plugin's one skill when it has no skills folder."""
    path = root / "SKILL.md"
    wanted = path.is_file() and manifest.skills is None and not (root / "skills").is_dir()
    return path if wanted else None


def _hooks(root: Path, manifest: PluginManifest, paths: _Paths, problems: list[PluginProblem],
           ) -> tuple[dict[str, Any], list[str]]:
    merged: dict[str, list[Any]] = {}
    sources: list[str] = []
    inline = manifest.hooks if isinstance(manifest.hooks, dict) else None
    files = [root / "hooks" / "hooks.json"] if (root / "hooks" / "hooks.json").exists() else []
    if inline is None:
        files += paths.listed(manifest.hooks, "hooks")
    by_target: dict[Path, Path] = {}
    for path in files:  # each file once, named as the plugin names it (a symlink's target is not its name)
        by_target.setdefault(path.resolve(), path)
    blocks = [(str(f), _hooks_file(f, problems)) for f in by_target.values()]
    if inline is not None:
        blocks.append((str(root / MANIFEST), inline))
    for where, raw in blocks:
        events = _events(raw)
        if events is None:
            continue
        try:
            parsed = read_hooks(_expand(events, root), where)
        except HookConfigError as exc:
            problems.append(PluginProblem(where, f"field {exc.field!r}: {exc.message}; these hooks not loaded"))
            continue
        for event, groups in parsed.kept.items():
            merged.setdefault(event, []).extend(groups)
        problems.extend(PluginProblem(w.source, f"{w.field}: {w.message}") for w in parsed.warnings)
        sources.append(where)
    return merged, sources


def _hooks_file(path: Path, problems: list[PluginProblem]) -> Any:
    try:
        return read_json(path, what="a hooks file")
    except READ_ERRORS as exc:
        problems.append(PluginProblem(str(path), f"cannot read hooks: {reason(exc)}; these hooks not loaded"))
        return None


def _events(raw: Any) -> dict[str, Any] | None:
    """The event mapping of a hooks file (``{"hooks": {...}}``, Claude Code's shape) or inline block."""
    if isinstance(raw, dict) and isinstance(raw.get("hooks"), dict):
        return raw["hooks"]
    if isinstance(raw, dict):
        return {key: value for key, value in raw.items() if key != "description"}
    return None


def _expand(value: Any, root: Path) -> Any:
    """``${CLAUDE_PLUGIN_ROOT}`` replaced in every string; a shell-form command also gets it exported."""
    if isinstance(value, dict):
        expanded = {key: _expand(item, root) for key, item in value.items()}
        command = value.get("command")
        if isinstance(command, str) and "args" not in value:
            expanded["command"] = f"export CLAUDE_PLUGIN_ROOT={shlex.quote(str(root))}; {expanded['command']}"
        return expanded
    if isinstance(value, list):
        return [_expand(item, root) for item in value]
    return value.replace(ROOT_VAR, str(root)) if isinstance(value, str) else value


def _unique(paths: list[Path]) -> list[Path]:
    return list(dict.fromkeys(p.resolve() for p in paths))
