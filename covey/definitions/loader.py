"""Loading agent definitions from markdown files, ``--agents`` JSON and API objects (docs/definitions.md#your-own-definitions).

Sources, lowest to highest priority: built-in < plugin < user < project < flag
< policy; a later one replaces an earlier one of the same name. A bad file is
reported with its path and field and skipped, so one typo never hides the rest;
a file Claude Code skips (no ``name``, say) is skipped with the reason
(``covey/definitions/markdown.py`` reads the files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Iterable

from pydantic import ValidationError

from covey.common.safe_files import load_json
from covey.definitions.builtin import builtin_agents
from covey.definitions.definition import AgentDefinition, Source
from covey.definitions.markdown import agent_files, read_agent_file
from covey.definitions.memory import linked_below, memory_dir
from covey.definitions.spawn_types import split_tools
from covey.hooks.read import HookConfigError, HookWarning, read_hooks
from covey.plugins.plugin import Plugin, read_plugin
from covey.settings.files import Sources, reads
from covey.settings.grants import GRANTING_MODES
from covey.settings.managed import SURFACES
from covey.trust import SetAside

# Keys a file may set: every field name and alias, except the two the loader owns
# (a file must not promote itself to ``source: policy``).
_OWN_KEYS = {"source", "path"}
_KNOWN_KEYS = {
    key
    for name, info in AgentDefinition.model_fields.items()
    if name not in _OWN_KEYS
    for key in (name, info.alias)
    if key
}
_LIST_KEYS = ("tools", "disallowedTools", "disallowed_tools", "skills")


@dataclass(frozen=True)
class DefinitionError:
    """One definition that could not be loaded: where, which field, what is wrong."""

    path: str
    field: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.message}" if self.field else f"{self.path}: {self.message}"


@dataclass
class LoadResult:
    definitions: dict[str, AgentDefinition]
    """The active definition of each name, after overrides."""
    errors: list[DefinitionError] = field(default_factory=list)
    warnings: list[HookWarning] = field(default_factory=list)
    """Hook items covey skipped (an event or hook type it does not support)."""
    skipped: list[DefinitionError] = field(default_factory=list)
    """Files (or fields of them) left out as Claude Code leaves them out: no ``name``, no
    ``description``, a second file of the same name, an ``effort`` it does not know."""


def load_definitions(
    cwd: str | Path,
    *,
    home: str | Path | None = None,
    flag_agents: str | dict | list | None = None,
    extra: Iterable[AgentDefinition] = (),
    policy_dir: str | Path | None = None,
    plugin_dirs: Iterable[str | Path | Plugin] = (),
    strict_plugin_only: bool | Collection[str] = False,
    coordinator: bool = False,
    sources: Sources = None,
    aside: SetAside | None = None,
) -> LoadResult:
    """Every active agent definition for a session in ``cwd``, and what failed to load.

    ``plugin_dirs``: plugins (or their folders); ``policy_dir``: the managed agents folder;
    ``strict_plugin_only``: the surfaces a managed ``strictPluginOnlyCustomization`` locks
    (True: all of them); ``sources``: the kinds of file read (``--setting-sources``: the user and
    project agents folders; None: both); ``aside``: the folder is not trusted, so what its own
    definitions would grant (``hooks``, ``mcpServers``, a ``permissionMode`` that runs calls unasked)
    is set aside there."""
    home_dir = Path(home) if home is not None else Path.home()
    project = Path(cwd)
    locked = set(SURFACES) if strict_plugin_only is True else set(strict_plugin_only or ())
    result = LoadResult(definitions=builtin_agents(coordinator=coordinator))
    for plugin in plugin_dirs:
        _load_plugin(result, plugin)
    if "agents" not in locked:  # a locked surface loads from plugins and managed sources only
        places: tuple[tuple[Path, Source], ...] = ((home_dir, "user"), (project, "project"))
        for base, source in (place for place in places if reads(sources, place[1])):
            _load_dir(result, base / ".claude" / "agents", source)
            _load_dir(result, base / ".covey" / "agents", source)
    _load_flags(result, flag_agents)
    for definition in extra:
        _add(result, definition.model_copy(update={"source": "flag"}))
    if policy_dir is not None:
        _load_dir(result, Path(policy_dir), "policy")
    _strip_untrusted(result, locked)
    if aside is not None:
        _set_aside(result, aside, project)
    return result


def _set_aside(result: LoadResult, aside: SetAside, project: Path) -> None:
    """An untrusted folder's definitions run as the person's own would, with none of their grants
    (a memory folder that is a link is not used: covey/subagents/children.py)."""
    for name, definition in result.definitions.items():
        if definition.source != "project":
            continue
        if definition.memory in ("project", "local") and linked_below(
                memory_dir(name, definition.memory, project=project, env={}), project):
            aside.add("memory (its folder is a link)", definition.path or name)
        update: dict[str, Any] = {}
        for attribute, key in (("hooks", "hooks"), ("mcp_servers", "mcpServers")):
            if getattr(definition, attribute):
                update[attribute] = type(getattr(definition, attribute))()
                aside.add(key, definition.path or name)
        if definition.permission_mode in GRANTING_MODES:
            update["permission_mode"] = None
            aside.add(f"permissionMode {definition.permission_mode}", definition.path or name)
        if update:
            result.definitions[name] = definition.model_copy(update=update)


def _add(result: LoadResult, definition: AgentDefinition, where: str | None = None) -> None:
    where = where or definition.path or f"agent {definition.name!r}"
    checked = _check_hooks(result, definition, where)
    if checked is not None:
        result.warnings.extend(_unsupported(checked, where))
        result.definitions[definition.name] = checked


def _unsupported(definition: AgentDefinition, where: str) -> list[HookWarning]:
    """Fields covey reads but cannot honour, said once when the file loads rather than dropped."""
    warnings = []
    if definition.isolation == "remote":
        warnings.append(HookWarning(where, "isolation", "remote: covey has no remote backend, so launching "
                                                        f"{definition.name!r} is refused (an error the caller reads)"))
    if definition.initial_prompt:
        warnings.append(HookWarning(where, "initialPrompt", "not used: it is the first turn of an agent run as the "
                                    "main agent (claude --agent), and covey runs definitions only as sub-agents, "
                                    "whose first turn is the Agent call's prompt"))
    return warnings


def _check_hooks(result: LoadResult, definition: AgentDefinition, where: str) -> AgentDefinition | None:
    """Hooks follow the settings rule: what covey lacks is skipped with a warning,
    a malformed entry fails the definition (at load, not when the agent starts)."""
    if not definition.hooks:
        return definition
    try:
        hooks = read_hooks(definition.hooks, where)
    except HookConfigError as exc:
        result.errors.append(DefinitionError(where, exc.field, exc.message))
        return None
    result.warnings.extend(hooks.warnings)
    return definition.model_copy(update={"hooks": hooks.kept})


def _load_dir(result: LoadResult, directory: Path, source: Source) -> None:
    """Every definition file under ``directory``, subfolders included; within one tree the
    first file of a name (in path order) is kept and a later one skipped, with a warning."""
    if not directory.is_dir():
        return
    first_of: dict[str, Path] = {}
    for path in agent_files(directory):
        definition = _load_file(result, path, source)
        if definition is None:
            continue
        if definition.name in first_of:
            message = f"skipped: {first_of[definition.name]} in the same folder tree also defines {definition.name!r}"
            result.skipped.append(DefinitionError(str(path), "name", message))
            continue
        first_of[definition.name] = path
        _add(result, definition)


def _load_file(result: LoadResult, path: Path, source: Source) -> AgentDefinition | None:
    read = read_agent_file(path, name_from_file=source == "plugin")
    result.skipped.extend(DefinitionError(str(path), problem.field, problem.message) for problem in read.skipped)
    if read.error is not None:
        result.errors.append(DefinitionError(str(path), read.error.field, read.error.message))
    if read.fields is None:
        return None
    return _validate(result, _clean(read.fields), source, str(path))


def _clean(data: dict[str, Any]) -> dict[str, Any]:
    """Drop unknown and empty keys (as Claude Code does); split ``tools: Read, Agent(Explore, Plan)``
    strings at the commas outside parentheses."""
    cleaned = {key: value for key, value in data.items() if key in _KNOWN_KEYS and value is not None}
    for key in _LIST_KEYS:
        if isinstance(cleaned.get(key), str):
            cleaned[key] = split_tools(cleaned[key])
    return cleaned


def _validate(result: LoadResult, fields: dict[str, Any], source: Source, where: str) -> AgentDefinition | None:
    try:
        return AgentDefinition.model_validate({**fields, "source": source, "path": where})
    except ValidationError as exc:
        for problem in exc.errors():
            name = ".".join(str(part) for part in problem["loc"]) or None
            result.errors.append(DefinitionError(where, name, problem["msg"]))
        return None


def _load_flags(result: LoadResult, flag_agents: str | dict | list | None) -> None:
    """``--agents`` JSON (``{"name": {...}}``), the same as a dict, or a list of dicts/definitions."""
    if flag_agents is None:
        return
    if isinstance(flag_agents, str):
        try:
            flag_agents = load_json(flag_agents)
        except ValueError as exc:  # not JSON, or nested too deep
            result.errors.append(DefinitionError("--agents", None, f"invalid JSON: {exc}"))
            return
    if isinstance(flag_agents, dict):
        flag_agents = [{**spec, "name": name} if isinstance(spec, dict) else spec for name, spec in flag_agents.items()]
    if not isinstance(flag_agents, list):
        result.errors.append(DefinitionError("--agents", None, "expected an object of name -> definition"))
        return
    for spec in flag_agents:
        _load_flag(result, spec)


def _load_flag(result: LoadResult, spec: Any) -> None:
    if isinstance(spec, AgentDefinition):
        _add(result, spec.model_copy(update={"source": "flag"}))
    elif isinstance(spec, dict) and isinstance(spec.get("name"), str):
        where = f"--agents {spec['name']}"
        definition = _validate(result, _clean(spec), "flag", where)
        if definition is not None:
            _add(result, definition.model_copy(update={"path": None}), where)
    else:
        result.errors.append(DefinitionError("--agents", None, f"expected a definition object, got {spec!r}"))


def _strip_untrusted(result: LoadResult, locked: Collection[str]) -> None:
    """Strict plugin-only policy: user and project agents run without hooks (``hooks`` locked)
    and without MCP servers (``mcp`` locked)."""
    update: dict[str, Any] = {**({"hooks": {}} if "hooks" in locked else {}), **({"mcp_servers": []} if "mcp" in locked else {})}
    if not update:
        return
    for name, definition in result.definitions.items():
        if definition.source in ("user", "project"):
            result.definitions[name] = definition.model_copy(update=update)


_PLUGIN_IGNORED: dict[str, Any] = {"hooks": {}, "mcp_servers": [], "permission_mode": None}
"""Fields Claude Code ignores in a plugin's agents (a plugin may not grant itself these)."""


def _load_plugin(result: LoadResult, plugin: Plugin | str | Path) -> None:
    """A plugin's agents, named ``plugin:name``; a subfolder of its agents folder adds ``:folder``."""
    if not isinstance(plugin, Plugin):
        read = read_plugin(plugin, "--plugin-dir")
        result.errors.extend(DefinitionError(p.path, None, p.message) for p in read.problems)
        if read.plugin is None:
            return
        plugin = read.plugin
    for root in plugin.agent_paths:
        for path in [root] if root.is_file() else sorted(root.rglob("*.md")):
            definition = _load_file(result, path, "plugin")
            if definition is not None:
                segments = path.parent.relative_to(root).parts if path != root else ()
                _add(result, _plugin_agent(result, plugin.name, segments, definition))


def _plugin_agent(result: LoadResult, plugin: str, segments: tuple[str, ...], definition: AgentDefinition,
                  ) -> AgentDefinition:
    name = ":".join((plugin, *segments, definition.name))
    if definition.name.startswith(f"{plugin}:"):
        name = definition.name
    for field_name, empty in _PLUGIN_IGNORED.items():
        if getattr(definition, field_name) not in (empty, None):
            alias = AgentDefinition.model_fields[field_name].alias or field_name
            result.warnings.append(HookWarning(str(definition.path), alias,
                                               "ignored: a plugin's agents cannot set it (as in Claude Code)"))
    return definition.model_copy(update={"name": name, **_PLUGIN_IGNORED})
