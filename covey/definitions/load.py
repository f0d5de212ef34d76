"""What a session offers its agents: plugins, definitions (built-ins, plugins, files, flags, API
objects, managed ones) and skills."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Collection, Iterable, Mapping

from covey.definitions.definition import AgentDefinition
from covey.settings.files import Sources, reads


def session_plugins(cwd: Path, settings: Any, *, plugin_dirs: Iterable[str] = (), home: Path | None = None,
                    env: Mapping[str, str] | None = None) -> Any:
    """The session's plugins (``--plugin-dir`` and ``enabledPlugins``), their hooks added to ``settings``."""
    from covey.hooks.read import HookWarning
    from covey.plugins import load_plugins

    scan = load_plugins(cwd, plugin_dirs=plugin_dirs, enabled=settings.enabled_plugins, home=home, env=env)
    for plugin in scan.plugins.values():
        where = f"plugin {plugin.name!r} ({', '.join(plugin.hook_sources)})"
        if plugin.hooks and getattr(settings, "managed_hooks_only", False):
            settings.warnings.append(HookWarning(where, "hooks", "not loaded: the managed allowManagedHooksOnly "
                                                                 "lets only managed hooks run"))
        elif plugin.hooks:
            settings.add_hooks(plugin.hooks, where)
    return scan


def managed_agents_dir(settings: Any) -> Path | None:
    """The managed settings folder's ``.claude/agents`` (policy definitions)."""
    return Path(settings.managed_dir) / ".claude" / "agents" if getattr(settings, "managed_dir", None) else None


def session_definitions(
    cwd: Path, extra: Any, *, home: Path | None = None, plugins: Iterable[Any] = (),
    policy_dir: Path | None = None, locked: Collection[str] = (), coordinator: bool = False, sources: Sources = None,
    aside: Any = None, env: Mapping[str, str] | None = None,
) -> tuple[dict[str, AgentDefinition], list[Any], list[Any]]:
    """(active definitions by name, load errors, skipped-hook warnings) for a session in ``cwd``;
    the user's own come from ``home`` (default: this process's home). In coordinator mode the
    ``worker`` type replaces the built-ins; the user's, project's and plugins' own stay. A session
    a claude-agent-sdk program runs (``env``'s entrypoint) has no built-in guide."""
    from covey.definitions.loader import load_definitions

    objects = [d for d in extra if isinstance(d, AgentDefinition)] if isinstance(extra, list) else []
    flags = extra if isinstance(extra, (str, dict)) else None
    result = load_definitions(cwd, home=home, flag_agents=flags, extra=objects, plugin_dirs=plugins,
                              policy_dir=policy_dir, strict_plugin_only=locked, coordinator=coordinator,
                              sources=sources, aside=aside)
    definitions = without_guide(result.definitions) if sdk_run(env or {}) else with_guide(result.definitions, cwd, sources)
    return definitions, result.errors, result.warnings


def sdk_run(env: Mapping[str, str]) -> bool:
    """Whether a claude-agent-sdk program started this run (``sdk-py``, ``sdk-ts``, ``sdk-cli``)."""
    from covey.trust.decision import SDK_ENTRYPOINT

    return env.get(SDK_ENTRYPOINT, "").strip().startswith("sdk")


def without_guide(definitions: dict[str, AgentDefinition]) -> dict[str, AgentDefinition]:
    """Claude Code offers no guide agent to a program: it answers a person's questions about the tool
    itself. The user's own ``covey-guide`` stays."""
    guide = definitions.get("covey-guide")
    if guide is None or guide.source != "built-in":
        return definitions
    return {name: d for name, d in definitions.items() if name != "covey-guide"}


def with_guide(definitions: dict[str, AgentDefinition], cwd: Path, sources: Sources = None) -> dict[str, AgentDefinition]:
    """The covey-guide built-in, told about this project's own agents, skills and settings files."""
    from covey.definitions.builtin import DEFAULT_DOCS_DIR, guide_definition

    guide = definitions.get("covey-guide")
    if guide is None or guide.source != "built-in":
        return definitions  # the user's own covey-guide wins
    custom = [f"- agent {d.name} ({d.source}, {d.path or 'defined in code'})" for d in definitions.values()
              if d.source != "built-in"]
    files = [f"- settings {p}" for p in _settings_files(cwd, sources)]
    folders = (cwd / ".claude" / "skills", cwd / ".covey" / "skills") if reads(sources, "project") else ()
    skills_dirs = [f"- skills folder {p}" for p in folders if p.is_dir()]
    return {**definitions, "covey-guide": guide_definition(DEFAULT_DOCS_DIR, "\n".join(custom + skills_dirs + files))}


def _settings_files(cwd: Path, sources: Sources) -> list[Path]:
    names = [name for kind, name in (("project", "settings.json"), ("local", "settings.local.json")) if reads(sources, kind)]
    return [cwd / d / n for d in (".claude", ".covey") for n in names if (cwd / d / n).exists()]


def session_skills(cwd: Path, *, home: Path | None = None, plugins: Iterable[Any] = (),
                   managed_dir: str | Path | None = None, locked: Collection[str] = (),
                   sources: Sources = None, aside: Any = None) -> tuple[dict[str, Any], list[Any]]:
    """(skills by name, load errors) for a session in ``cwd``; the user's own come from ``home``."""
    from covey.definitions.skill_loader import discover_skills

    scan = discover_skills(cwd, home=home, plugins=plugins, managed_dir=managed_dir, locked=locked, sources=sources,
                           aside=aside)
    return scan.skills, scan.errors
