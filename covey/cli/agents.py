"""The text ``covey agents`` prints: the active agent types, skills and plugins, with where each came
from, then what failed to load and what was skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from covey.definitions.context import tools_summary
from covey.definitions.loader import LoadResult
from covey.observe.tables import table_lines


def agents_report(cwd: str, agents_json: str | None, plugin_dirs: Iterable[str], env: Mapping[str, str]) -> str:
    """Everything a session in ``cwd`` would load, as ``covey agents`` shows it (in coordinator
    mode, when ``env`` turns it on, with ``worker`` in place of the built-ins)."""
    from covey.definitions.coordinator import coordinator_mode
    from covey.definitions.load import managed_agents_dir, session_plugins, session_skills
    from covey.definitions.loader import load_definitions
    from covey.settings.managed import managed_dir
    from covey.settings.merged import Settings
    from covey.trust import decide

    cwd = str(Path(cwd).resolve())  # every path it shows absolute, as the plugins' and skills' are
    home = Path(env["HOME"]) if env.get("HOME") else None
    trust = decide(Path(cwd), home=home or Path.home(), env=env)
    settings = Settings.load(cwd, home=home, managed_dir=managed_dir(), trusted=trust.trusted,
                             config=env.get("CLAUDE_CONFIG_DIR"))
    aside = None if trust.trusted else settings.set_aside
    scan = session_plugins(Path(cwd), settings, plugin_dirs=plugin_dirs, home=home, env=env)
    plugins, locked = list(scan.plugins.values()), settings.strict_plugin_only
    coordinator = coordinator_mode(env)
    result = load_definitions(cwd, home=home, flag_agents=agents_json, plugin_dirs=plugins,
                              policy_dir=managed_agents_dir(settings), strict_plugin_only=locked,
                              coordinator=coordinator, aside=aside)
    skills, skill_errors = session_skills(Path(cwd), home=home, plugins=plugins,
                                          managed_dir=settings.managed_dir, locked=locked, aside=aside)
    sections = [list_agents_text(result), skills_text(skills, skill_errors), plugins_text(plugins, result, skills)]
    if coordinator:
        sections.insert(0, COORDINATOR_NOTE)
    problems = [str(p) for p in scan.problems] + [str(w) for w in settings.warnings]
    if untrusted := settings.set_aside.line(Path(cwd)):
        problems.insert(0, untrusted)
    if locked:
        problems.insert(0, f"managed strictPluginOnlyCustomization locks: {', '.join(locked)}")
    if problems:
        sections.append("\n".join([f"{len(problems)} plugin and settings note(s):", *(f"  {p}" for p in problems)]))
    return "\n\n".join(section for section in sections if section)


COORDINATOR_NOTE = ("Coordinator mode is on (COVEY_COORDINATOR_MODE or CLAUDE_CODE_COORDINATOR_MODE): "
                    "the worker type replaces the built-in types; your own types stay.")


def list_agents_text(load_result: LoadResult) -> str:
    """One line per active type (name, source, model, tools), then one per load error, skipped
    file and skipped hook. A type without a model inherits its parent's."""
    definitions = sorted(load_result.definitions.values(), key=lambda d: (d.source != "built-in", d.name.lower()))
    rows = [[d.name, " · ".join((f"{d.source} ({d.path})" if d.path else d.source, f"model: {d.model or 'inherit'}",
                                 f"tools: {tools_summary(d)}"))] for d in definitions]
    lines = [f"{len(definitions)} active agent type(s):", *table_lines(rows, ("bold",))]
    if load_result.errors:
        lines.append("")
        lines.append(f"{len(load_result.errors)} definition error(s):")
        lines.extend(f"  {error}" for error in load_result.errors)
    if load_result.skipped:
        lines.append("")
        lines.append(f"{len(load_result.skipped)} file(s) or field(s) skipped, as Claude Code skips them:")
        lines.extend(f"  {skip}" for skip in load_result.skipped)
    if load_result.warnings:
        lines.append("")
        lines.append(f"{len(load_result.warnings)} setting(s) skipped (hooks covey lacks, fields a plugin agent may not set):")
        lines.extend(f"  {warning}" for warning in load_result.warnings)
    return "\n".join(lines)


def skills_text(skills: Mapping[str, Any], errors: Iterable[Any] = ()) -> str:
    """One line per skill: the name it is called by, its source and file, its label and grants."""
    rows = []
    for name in sorted(skills):
        skill = skills[name]
        extras = [f"label: {skill.label}"] if skill.label and skill.label != name.split(":")[-1] else []
        extras += [f"allowed-tools: {' '.join(skill.allowed_tools)}"] if skill.allowed_tools else []
        extras += ["user-invoked only"] if not skill.model_invocable else []
        kind = "command" if skill.kind == "command" else "skill"
        rows.append([name, " · ".join((f"{skill.source} {kind} ({skill.path})", *extras))])
    lines = [f"{len(skills)} skill(s):", *table_lines(rows, ("bold",))]
    errors = list(errors)
    if errors:
        lines += ["", f"{len(errors)} skill error(s):", *(f"  {error}" for error in errors)]
    return "\n".join(lines)


def plugins_text(plugins: list[Any], load_result: LoadResult, skills: Mapping[str, Any]) -> str:
    """Each plugin: name, version, where it came from, and its parts."""
    if not plugins:
        return ""
    lines = [f"{len(plugins)} plugin(s):"]
    for plugin in plugins:
        prefix = f"{plugin.name}:"
        version = f" {plugin.version}" if plugin.version else ""
        lines.append(f"  {plugin.name}{version}  {plugin.root} · from {plugin.origin}")
        agents = sorted(n for n, d in load_result.definitions.items() if d.source == "plugin" and n.startswith(prefix))
        owned = sorted(n for n, s in skills.items() if s.plugin == plugin.name)
        parts = {"agents": agents, "skills": [n for n in owned if skills[n].kind == "skill"],
                 "commands": [n for n in owned if skills[n].kind == "command"], "hooks": sorted(plugin.hooks)}
        lines += [f"    {kind}: {', '.join(names)}" for kind, names in parts.items() if names]
    return "\n".join(lines)
