"""What a session reads before Ray starts: its environment, settings, plugins, model, permission
policy, limits, agent definitions, skills and MCP servers, and the warnings loading them left.

A missing API key, a bad settings or rule file fails here, before any actor exists.
"""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, cast

from covey.common.flags import env_flag
from covey.definitions.coordinator import coordinator_mode
from covey.definitions.load import managed_agents_dir, session_definitions, session_plugins, session_skills
from covey.definitions.output_style import DEFAULT_STYLE, OutputStyle, choose_style
from covey.errors import UserError
from covey.gateway.factory import SCRIPTED_PREFIX, make_model
from covey.hooks.callback import sdk_hook_settings
from covey.mcp.approval import Approval
from covey.mcp.permission_tool import McpPermissionTool
from covey.mcp.sources import session_servers
from covey.model.aliases import DEFAULT_MODEL, resolve_model
from covey.permissions.askers import CallbackAsker
from covey.permissions.modes import PermissionMode
from covey.permissions.policy import PermissionPolicy
from covey.permissions.rules import parse_rule
from covey.registry.warm_pool import default_pool_size
from covey.runtime.limits import Limits
from covey.session.options import SessionOptions, check_mode
from covey.session.record import chosen_session_id, resume_point
from covey.settings.files import sandbox_note, source_set
from covey.settings.guard import cli_rules, managed_hooks_only, start_mode
from covey.settings.managed import managed_dir
from covey.settings.merged import Settings
from covey.transcripts.session_files import SessionRoots, project_folder
from covey.trust import TRUSTED, Trust, decide

log = logging.getLogger("covey.session")


@dataclass
class Loaded:
    """A session's configuration, read once at its start."""

    settings: Settings
    plugins: Any
    """The plugin scan (``PluginScan``): plugins by name, and the problems loading them."""
    model_id: str
    policy: PermissionPolicy
    asker: Any
    limits: Limits
    definitions: dict[str, Any]
    definition_errors: list[Any]
    skills: dict[str, Any]
    skill_errors: list[Any]
    mcp: Any
    """The session's MCP servers (``McpSources``) and the warnings reading their configs left."""
    output_style: OutputStyle = DEFAULT_STYLE
    """The main agent's output style (settings' ``outputStyle``; docs/definitions.md#output-styles)."""
    warnings: list[str] = field(default_factory=list)
    trust: Trust = TRUSTED
    """Whether the project folder is trusted, and why (covey/trust/)."""


def run_env(given: SessionOptions) -> tuple[dict[str, str], Path | None]:
    """The run's environment (a copy: the session reads it, never ``os.environ``) and the
    user's home it names (``None``: this process's). Agents get the environment only when
    ``env`` was given; otherwise they keep their actor's own."""
    env = dict(given.env) if given.env is not None else dict(os.environ)
    home = Path(env["HOME"]) if given.env is not None and env.get("HOME") else None
    return env, home


def with_env_defaults(options: SessionOptions, env: dict[str, str], home: Path | None) -> SessionOptions:
    """The options left unset, as the run's environment sets them: ``start`` reads them from the options."""
    defaults: dict[str, Any] = {
        "shared_fs": env_flag(env, "COVEY_SHARED_FS") if options.shared_fs is None else options.shared_fs,
        "teams": env_flag(env, "COVEY_ENABLE_TEAMS") if options.teams is None else options.teams,
        "coordinator": coordinator_mode(env) if options.coordinator is None else options.coordinator,
        "pool_size": default_pool_size(env) if options.pool_size is None else options.pool_size,
        "service": env_flag(env, "COVEY_SERVICE") if options.service is None else options.service,
    }
    return options.model_copy(update=defaults)


def config_root(options: SessionOptions, cwd: Path) -> Path:
    """Where the project's settings, ``.claude`` definitions and ``.mcp.json`` are read:
    ``project_config_root`` (the checkout ``cwd`` is a worktree of), else ``cwd``."""
    return Path(options.project_config_root).resolve() if options.project_config_root else cwd


def session_roots(options: SessionOptions, env: dict[str, str], home: Path | None) -> SessionRoots:
    """Where the session's files go: ``transcript_dir``, else the run's Claude Code config dir
    (``CLAUDE_CONFIG_DIR``, else ``~/.claude`` of the env's ``HOME``, else each node's ``~``),
    and where an older covey kept them (docs/resume.md)."""
    return SessionRoots.of(options.transcript_dir, env=env, home=home)


def transcript_folder(options: SessionOptions, env: dict[str, str], home: Path | None, cwd: Path) -> Path:
    """The project folder that holds the session's transcripts: ``<root>/projects/<project>``."""
    return project_folder(session_roots(options, env, home).root, cwd)


@dataclass(frozen=True)
class Place:
    """Where a session's files go, the session it continues, and its id."""

    options: SessionOptions
    """The options, with a session not kept's private folder as its ``transcript_dir``."""
    kept: SessionRoots
    """Where sessions are kept: a resumed one is found there (docs/resume.md)."""
    roots: SessionRoots
    """Where this session's files go (``kept``, unless it is not kept)."""
    resumed: Any
    """Where a resumed session continues (``resume`` / ``continue_conversation``), else None."""
    session_id: str
    transcript_folder: Path
    """Where its transcripts go, as Claude Code's: ``<config>/projects/<project>`` (docs/resume.md);
    a resumed session's stay with its main transcript, wherever covey was started."""


def place(options: SessionOptions, cwd: Path, env: dict[str, str], home: Path | None, private: Path | None) -> Place:
    """The session's ``Place``; ``private``: the folder of a session that is not kept (covey/session/ephemeral.py)."""
    kept = session_roots(options, env, home)
    if private is not None:
        options = options.model_copy(update={"transcript_dir": str(private)})
    resumed = resume_point(options, cwd, kept, into=private)
    folder = Path(resumed.transcript).parent if resumed else transcript_folder(options, env, home, cwd)
    return Place(options=options, kept=kept, roots=session_roots(options, env, home), resumed=resumed,
                 session_id=chosen_session_id(options, resumed, kept), transcript_folder=folder)


def load(options: SessionOptions, cwd: Path, env: dict[str, str], home: Path | None, resumed: Any,
         session_id: str) -> Loaded:
    """Everything the session reads from files and its environment, in the order it must be read."""
    project = config_root(options, cwd)
    trust = decide(project, home=home or Path.home(), env=env, flag=options.trust, setting_sources=options.setting_sources)
    settings = Settings.load(cwd, home=home, extra=options.settings, sources=options.setting_sources,
                             managed_dir=managed_dir(), parent_managed=options.managed_settings, project=project,
                             trusted=trust.trusted, config=env.get("CLAUDE_CONFIG_DIR"))
    plugins = session_plugins(project, settings, plugin_dirs=options.plugin_dirs, home=home, env=env)
    if options.sdk_hooks:
        settings.add_hooks(sdk_hook_settings(options.sdk_hooks), "hooks of the claude-agent-sdk client")
    model_id = _main_model(options, settings, env, resumed)
    folder = Path(resumed.transcript).parent if resumed else transcript_folder(options, env, home, cwd)
    policy, notes = _policy(options, settings, cwd, home, resumed, readable_paths(folder, session_id))
    limits = options.limits or Limits.from_env(env)
    if options.limits is None and settings.queue_spawns is not None:  # the settings key beats COVEY_QUEUE_SPAWNS
        limits = limits.model_copy(update={"queue_spawns": settings.queue_spawns})
    if options.max_budget_usd is not None:
        limits = limits.model_copy(update={"budget_usd": options.max_budget_usd})
    asker = options.asker or (CallbackAsker(options.on_permission) if options.on_permission else None)
    if options.permission_prompts == "none":  # nobody answers: what would be asked is denied at once
        asker = None
    loaded = _definitions(options, settings, plugins, project, home, env, model_id, policy, asker, limits, trust)
    if options.permission_prompt_tool and options.permission_prompts != "none":
        loaded.asker = McpPermissionTool(options.permission_prompt_tool, loaded.mcp.servers, cwd=str(cwd), env=env,
                                         relay=options.on_mcp_message)
    untrusted = settings.set_aside.line(project)
    loaded.warnings = [*([untrusted] if untrusted else []), *loaded.warnings, *notes]
    loaded.trust = trust
    for warning in loaded.warnings:
        log.warning("%s", warning)
    _log_loaded(loaded, project)
    return loaded


def _log_loaded(loaded: Loaded, project: Path) -> None:
    """What the session loaded, for its debug log (``--debug``)."""
    log.debug("project config %s; settings from %s", project, ", ".join(loaded.settings.sources) or "no file")
    log.debug("main model %s, permission mode %s, output style %s, %s", loaded.model_id, loaded.policy.mode,
              loaded.output_style.name, "permission prompts answered" if loaded.asker else "nobody to ask")
    log.debug("agent types: %s", ", ".join(sorted(loaded.definitions)))
    log.debug("skills: %s; plugins: %s; MCP servers: %s", ", ".join(sorted(loaded.skills)) or "none",
              ", ".join(loaded.plugins.plugins) or "none", ", ".join(loaded.mcp.servers) or "none")


def readable_paths(folder: Path, session_id: str) -> list[Path]:
    """What covey keeps for this session that its agents read without asking: the session's
    transcripts in ``folder`` (a background child's output file) and this user's task output folder."""
    folder = folder.expanduser()
    return [folder / session_id, folder / f"{session_id}.jsonl", Path(tempfile.gettempdir()) / f"covey-{os.getuid()}"]


def _main_model(options: SessionOptions, settings: Settings, env: dict[str, str], resumed: Any) -> str:
    """The main agent's model id; the options' model built (it travels to every agent actor, so
    nodes need no key or rule file of their own; without an explicit env the SDK finds the
    credentials itself, profiles included), with the fallback model set on it."""
    recorded = resumed.record.model_id if resumed else None
    name = options.model_id or _model_name(options.model) or recorded or settings.model or DEFAULT_MODEL
    model_id = resolve_model(name, env=env)
    if not hasattr(options.model, "create"):
        options.model = make_model(options.model, env=options.env)
    if options.fallback_model:
        fallback = resolve_model(options.fallback_model, env=env)
        if fallback == model_id:
            raise UserError(f"--fallback-model {fallback} is the main model: name another model")
        if hasattr(options.model, "fallback_model"):
            options.model.fallback_model = fallback
    return model_id


def _model_name(model: Any) -> str | None:
    """``--model sonnet`` names the model id; ``scripted:PATH`` and objects do not."""
    if isinstance(model, str) and not model.startswith(SCRIPTED_PREFIX) and model != "anthropic":
        return model
    return None


def _policy(options: SessionOptions, settings: Settings, cwd: Path, home: Path | None, resumed: Any,
            readable: list[Path]) -> tuple[PermissionPolicy, list[str]]:
    """The main agent's permission policy, and what the person must be told about its mode and rules."""
    if options.permission_mode is not None:
        check_mode(options.permission_mode)
    mode, mode_notes = start_mode(settings, explicit=options.permission_mode,
                                  resumed=resumed.record.permission_mode if resumed else None)
    allow, deny, rule_notes = cli_rules(settings, options.allowed_tools, options.disallowed_tools)
    policy = policy_from_settings(
        settings, mode=cast(PermissionMode, mode), cli_allow=allow, cli_deny=deny, project_root=cwd, home=home,
        additional_directories=[Path(d).resolve() for d in options.additional_directories], readable=readable,
    )
    return policy, [*mode_notes, *rule_notes]


def policy_from_settings(settings: Settings, *, mode: PermissionMode | None = None, cli_allow: Iterable[str] = (),
                         cli_deny: Iterable[str] = (), cli_ask: Iterable[str] = (), **kwargs: Any) -> PermissionPolicy:
    """The settings' rules plus ``--allowed-tools`` / ``--disallowed-tools`` (source ``cliArg``), as a policy."""
    perms = settings.permissions
    kwargs.setdefault("block_outside_reads", bool(getattr(perms, "block_reads_outside_working_directories", False)))
    allow, deny, ask = ([parse_rule(text, source="cliArg", behavior=behavior) for text in texts]
                        for texts, behavior in ((cli_allow, "allow"), (cli_deny, "deny"), (cli_ask, "ask")))
    return PermissionPolicy(mode=mode or perms.default_mode or "default", allow=[*perms.allow, *allow],
                            deny=[*perms.deny, *deny], ask=[*perms.ask, *ask], **kwargs)


def _definitions(options: SessionOptions, settings: Settings, plugins: Any, cwd: Path, home: Path | None,
                 env: dict[str, str], model_id: str, policy: PermissionPolicy, asker: Any, limits: Limits,
                 trust: Trust) -> Loaded:
    """The agent definitions, skills and MCP servers of the project at ``cwd`` (its config root),
    with what was skipped loading them: the run goes on without it, so it is said once, up front."""
    found, locked = list(plugins.plugins.values()), settings.strict_plugin_only
    sources = source_set(options.setting_sources)  # --setting-sources: which kinds of file are read
    aside = None if trust.trusted else settings.set_aside  # what an untrusted folder's files grant goes there
    definitions, errors, skipped_hooks = session_definitions(
        cwd, options.agents, home=home, plugins=found, policy_dir=managed_agents_dir(settings), locked=locked,
        coordinator=bool(options.coordinator), sources=sources, aside=aside, env=env,
    )
    definitions, hook_notes = managed_hooks_only(definitions, settings)
    given = options.mcp_servers
    mcp = session_servers(cwd, home=home, env=env, given=[given] if isinstance(given, dict) else list(given or []),
                          strict=options.strict_mcp_config, locked="mcp" in settings.strict_plugin_only, sources=sources,
                          approval=Approval.of(trust, settings.mcp_approved, settings.mcp_disabled))
    for where, kinds in mcp.set_aside.found.items():
        for what in kinds:
            settings.set_aside.add(what, where)
    skills, skill_errors = session_skills(cwd, home=home, plugins=found, managed_dir=settings.managed_dir,
                                          locked=locked, sources=sources, aside=aside)
    style, style_notes = choose_style(settings.output_style, settings.output_style_from, cwd, home=home, sources=sources)
    sandbox = sandbox_note(settings.sandbox_enabled_by, settings.sandbox_required)
    warnings = [
        *(str(w) for w in (*settings.warnings, *skipped_hooks)), *(str(problem) for problem in plugins.problems),
        *(f"{e}; agent definition not loaded" for e in errors), *(f"{e}; skill not loaded" for e in skill_errors),
        *mcp.warnings, *hook_notes, *style_notes, *([sandbox] if sandbox else []),
    ]
    return Loaded(settings=settings, plugins=plugins, model_id=model_id, policy=policy, asker=asker, limits=limits,
                  definitions=definitions, definition_errors=errors, skills=skills, skill_errors=skill_errors,
                  mcp=mcp, output_style=style, warnings=warnings)
