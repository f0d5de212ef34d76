"""The session's main agent: its tools, system prompt, first messages, and the ``AgentSpec`` each
turn runs it with; the ``system/init`` event that announces a turn."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from covey.agent.catalog import tool_names as catalog_tool_names
from covey.agent.progress_summary import summary_interval_ms
from covey.common.flags import env_flag
from covey.common.subprocess_env import travelling_env
from covey.common.tool_names import canonical_tool_name
from covey.definitions.context import agent_list_message, project_context
from covey.definitions.coordinator import coordinator_prompt, coordinator_tools, worker_tools, workers_message
from covey.definitions.definition import AgentDefinition
from covey.definitions.mentions import file_mentions
from covey.definitions.output_style import styled_prompt
from covey.definitions.skill_listing import skill_list_message
from covey.definitions.system_prompt import MAIN_PROMPT, system_blocks
from covey.events import SystemInit
from covey.loop.compacting import compact_command
from covey.mcp.listing import probe
from covey.mcp.tools import mcp_tool_name
from covey.model.effort import effort_from_env
from covey.model.scripted import ScriptedModel
from covey.model.thinking import thinking_config, thinking_tokens_from_env
from covey.observe.otel import settings_of as otel_settings
from covey.permissions.modes import PermissionMode
from covey.permissions.policy import PermissionPolicy
from covey.runtime.spec import AgentSpec, RunSettings
from covey.session.config import SessionConfig
from covey.session.record import history
from covey.session.runtime import SessionRuntime
from covey.session.setup import readable_paths
from covey.settings.files import Sources, source_set
from covey.subagents.fork import fork_enabled
from covey.tools.options import BACKGROUND_DISABLED_ENV, ToolOptions
from covey.tools.structured_output import STRUCTURED_OUTPUT, SYSTEM_NOTE, check_schema
from covey.transcripts.transcript import transcript_path

if TYPE_CHECKING:
    from covey.session.main_slot import MainAgentSlot

MAIN_DEFINITION = AgentDefinition(name="main", description="The session's main agent.", prompt=MAIN_PROMPT)


def setting_sources(config: SessionConfig) -> Sources:
    """The kinds of file the session reads (``--setting-sources``; None: every kind)."""
    return source_set(config.options.setting_sources)


def tool_options(config: SessionConfig) -> ToolOptions:
    background_disabled = env_flag(config.env, BACKGROUND_DISABLED_ENV)
    # Claude Code turns forking off in coordinator mode: every spawn there is a worker.
    coordinator = bool(config.options.coordinator)
    fork = not coordinator and fork_enabled(config.env, config.settings.fork_subagent, config.settings.env)
    return ToolOptions(background_disabled=background_disabled, teams=bool(config.options.teams),
                       coordinator=coordinator, fork=fork)


def tool_names(config: SessionConfig) -> list[str]:
    """Every tool minus those removed whole by a bare ``--disallowed-tools`` name."""
    options = config.options
    removed = {name for name in options.disallowed_tools if "(" not in name}
    names = [name for name in catalog_tool_names(tool_options(config)) if name not in removed]
    if options.coordinator:  # the coordinator directs workers; they do the work
        names = coordinator_tools(names)
    if options.tools is not None:
        wanted = {canonical_tool_name(name) for name in options.tools}
        names = [name for name in names if name in wanted]
    # --json-schema: the final answer's tool, whatever else the tools are (docs/cli.md#structured-output).
    return [*names, STRUCTURED_OUTPUT] if options.json_schema is not None else names


def main_prompt(config: SessionConfig) -> str:
    options = config.options
    default = coordinator_prompt() if options.coordinator else styled_prompt(config.output_style)
    prompt = default if options.system_prompt is None else options.system_prompt
    if options.append_system_prompt:
        prompt = f"{prompt}\n\n{options.append_system_prompt}" if prompt else options.append_system_prompt
    return prompt + SYSTEM_NOTE if options.json_schema is not None else prompt


def main_prelude(config: SessionConfig, runtime: SessionRuntime | None) -> list[dict[str, Any]]:
    cwd = str(config.cwd)
    snapshot = runtime.project_context.get(cwd) if runtime is not None else None
    context = snapshot if snapshot is not None else project_context(cwd, omit=False, sources=setting_sources(config))
    listing = skill_list_message(config.skills) if "Skill" in tool_names(config) else None
    workers = [_workers_message(config)] if config.options.coordinator else []
    return [*context, agent_list_message(config.definitions), *workers, *([listing] if listing else [])]


def _workers_message(config: SessionConfig) -> dict[str, Any]:
    """What the coordinator is told its workers can use (their tools, in the background)."""
    available = catalog_tool_names(tool_options(config))
    return workers_message(worker_tools(config.definitions, available, max_depth=config.limits.max_depth))


def transcript(config: SessionConfig, session_id: str, agent_id: str) -> str:
    """The main agent's transcript: what every hook payload calls ``transcript_path``."""
    return str(transcript_path(config.transcript_folder, session_id, agent_id, main=True))


def main_policy(config: SessionConfig, mode: PermissionMode, session_id: str) -> PermissionPolicy:
    """The main agent's policy for its next turn: the base policy in ``mode``, reading unasked what
    covey keeps for the session under its id now (a served session takes its kit's id)."""
    policy = copy.copy(config.policy)  # the rules stay shared, as the one policy was before
    policy.mode, policy.readable = mode, tuple(readable_paths(config.transcript_folder, session_id))
    return policy


def main_spec(config: SessionConfig, slot: MainAgentSlot, prompt: str | None, runtime: SessionRuntime, *,
              session_id: str, model: Any) -> AgentSpec:
    """The main agent's spec for this turn: a later turn (or a resumed session's first) continues its conversation."""
    options, main_transcript = config.options, transcript(config, session_id, slot.agent_id)
    past = history(Path(main_transcript), slot.turns, config.resumed)
    first_resumed = config.resumed is not None and slot.turns == 0
    compact = compact_command(prompt)
    if compact is not None:  # /compact: nothing goes to the model as a prompt
        prompt = None
    policy = main_policy(config, slot.mode, session_id)
    return AgentSpec(
        session_id=session_id, agent_id=slot.agent_id, definition=MAIN_DEFINITION,
        prompt=prompt or "", history=past, next_prompt=prompt if past else None,
        # A resumed session's first turn fires SessionStart as "resume" (or "fork"); a fresh one "startup".
        session_source=("fork" if options.fork_session else "resume") if first_resumed else (
            options.start_source if slot.turns == 0 else None),
        mentions=_mentions(policy, config.cwd, prompt, slot.verbatim), model=model, model_id=slot.model_id,
        cwd=str(config.cwd), effort=options.effort or effort_from_env(config.env) or config.settings.effort_level,
        thinking=thinking_config(slot.model_id, mode=options.thinking, max_tokens=_thinking_tokens(config),
                                 display=options.thinking_display, always=config.settings.always_thinking),
        task_budget=options.task_budget, compact_request=compact,
        output_schema=check_schema(options.json_schema) if options.json_schema is not None else None,
        system=system_blocks(main_prompt(config), str(config.cwd), slot.model_id),
        prelude=main_prelude(config, runtime), tool_names=tool_names(config), permissions=policy,
        max_turns=options.max_turns, transcript_dir=str(config.transcript_folder), runtime=runtime,
        settings=_run_settings(config, main_transcript),
    )


def _mentions(policy: PermissionPolicy, cwd: Path, prompt: str | None, verbatim: bool) -> list[dict[str, Any]]:
    """The files the prompt names with ``@``, unless it came verbatim or a Read deny rule covers one."""
    if not prompt or verbatim or compact_command(prompt) is not None:
        return []
    return [m for m in file_mentions(prompt, str(cwd)) if not policy.read_denied(m["filename"])]


def _thinking_tokens(config: SessionConfig) -> int | None:
    """``--max-thinking-tokens``, else the run environment's ``MAX_THINKING_TOKENS``, as Claude Code reads them."""
    flag = config.options.max_thinking_tokens
    return flag if flag is not None else thinking_tokens_from_env(config.env)


def _run_settings(config: SessionConfig, main_transcript: str) -> RunSettings:
    settings, options = config.settings, config.options
    return RunSettings(
        model_prices=settings.model_prices, can_ask=config.asker is not None, model_limits=settings.model_limits,
        rate_limits=settings.rate_limits or None, auto_compact=settings.auto_compact_enabled is not False,
        partial_messages=options.include_partial_messages, hooks=settings.hooks,
        project_dir=str(config.config_root), session_transcript=main_transcript,
        # Only an explicit env travels (without the API's credentials): without one, agents keep
        # their actor's own, as before (a node's PATH and HOME are its own).
        env=travelling_env(options.env), mcp_servers=config.mcp.servers, bypass_disabled=settings.bypass_disabled is not None,
        betas=options.betas, hook_events=options.include_hook_events,
        session_mirror=options.session_mirror, trusted_project=settings.trusted,
        progress_summary_ms=summary_interval_ms(options.agent_progress_summaries,
                                                settings.agent_progress_summaries, config.env, settings.env),
        otel=otel_settings(config.env),
    )


async def ask_program_servers(config: SessionConfig) -> None:
    """Every server of the session, connected once at its first turn and stopped, so ``system/init``
    lists each as Claude Code does: ``connected`` (or ``failed``) with its scope as ``source``, its
    tools among ``tools``. The program's in-process servers (claude-agent-sdk's
    ``create_sdk_mcp_server``) answer through the session's relay. Each agent connects the servers
    it uses where it runs."""
    mcp, relay = config.mcp, config.options.on_mcp_message
    if mcp.program is not None:
        return
    servers = {name: server for name, server in mcp.servers.items() if server.type != "sdk" or relay is not None}
    mcp.program = {entry["name"]: entry for entry in await probe(
        servers, cwd=str(config.cwd), env=config.env, relay=relay)} if servers else {}


SCOPES = (("user config", "user"), ("project config", "project"), ("local config", "local"))
"""Claude Code's ``source`` of a server in ``system/init``, by where covey read it; else ``dynamic``
(``--mcp-config``, the program's ``mcpServers``) or ``sdk`` (in the program's process)."""


def _server_entry(name: str, config: SessionConfig) -> dict[str, Any]:
    server, program = config.mcp.servers[name], config.mcp.program
    if program is None or name not in program:
        return {"name": name, "status": "pending"}
    source = "sdk" if server.type == "sdk" else next(
        (scope for prefix, scope in SCOPES if server.source.startswith(prefix)), "dynamic")
    return {"name": name, "status": program[name]["status"], "source": source}


def _program_tools(config: SessionConfig) -> list[str]:
    return [mcp_tool_name(name, tool["name"]) for name, entry in (config.mcp.program or {}).items()
            if entry["status"] == "connected" for tool in entry.get("tools", [])]


def init_event(config: SessionConfig, slot: MainAgentSlot, session_id: str) -> SystemInit:
    return SystemInit(
        session_id=session_id, cwd=str(config.cwd), model=slot.model_id,
        tools=[*tool_names(config), *_program_tools(config)],
        permissionMode=slot.mode, agents=sorted(config.definitions), skills=sorted(config.skills),
        output_style=config.output_style.name,
        slash_commands=sorted(config.skills),
        mcp_servers=[_server_entry(name, config) for name in config.mcp.servers],
        plugins=[plugin.init_entry() for plugin in config.plugins.plugins.values()],
        apiKeySource=_api_key_source(config.env, config.options.model),
        additional_directories=[str(Path(d).resolve()) for d in config.options.additional_directories],
    )


def _api_key_source(env: dict[str, str], model: Any) -> str:
    """``system/init``'s ``apiKeySource``: which variable the Messages API key comes from."""
    if isinstance(model, ScriptedModel):  # no Messages API, no key
        return "none"
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        if env.get(name):
            return name
    return "none"
