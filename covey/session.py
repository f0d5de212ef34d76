"""``Session``: one covey run from a script, a notebook, a Ray job or the CLI.

The driver side of covey: it joins or starts Ray, starts the session's
registry (with its warm pool) and mailbox actors, runs the main agent in an
``AgentActor``, answers permission prompts that come up from any agent, and
removes everything it started when it closes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from pydantic import BaseModel, ConfigDict, Field

from covey.actors.handle import AgentHandle
from covey.actors.mailbox import MailboxHandle, mailbox_actor_class
from covey.actors.pool import default_pool_size
from covey.actors.shared_pool import SharedPoolHandle, pool_name
from covey.actors.warmup import model_modules
from covey.agents.context import agent_list_message, project_context
from covey.agents.coordinator import (
    coordinator_mode, coordinator_prompt, coordinator_tools, worker_tools, workers_message,
)
from covey.agents.definition import AgentDefinition
from covey.agents.fork import fork_enabled
from covey.flags import env_flag
from covey.agents.system_prompt import MAIN_PROMPT, system_blocks
from covey.agents.spec import AgentSpec, RunSettings
from covey.agents.transcript import DEFAULT_DIR as DEFAULT_TRANSCRIPT_DIR, transcript_path
from covey.errors import AgentUnavailable, CoveyError, UserError
from covey.events import Event, PermissionPrompt, ResultEvent, SystemInit, TaskNotification, UserEvent
from covey.hooks.callback import HookCallbackPrompt, sdk_hook_settings
from covey.hooks.session_end import fire_session_end
from covey.ids import AgentId, new_session_id
from covey.model.aliases import DEFAULT_MODEL, resolve_model
from covey.model.effort import effort_from_env
from covey.model.factory import SCRIPTED_PREFIX, make_model
from covey.model.scripted import ScriptedModel
from covey.mcp.sources import session_servers
from covey.model.usage import ModelUsage
from covey.permissions.askers import CallbackAsker
from covey.permissions.decisions import PermissionRequest
from covey.permissions.modes import RUN_MODES
from covey.permissions.policy import PermissionPolicy
from covey.observe.notebook import TreeDisplay, in_notebook
from covey.ray_runtime import NAMESPACE, ensure_ray, shutdown_if_started
from covey.registry.actor import RegistryHandle, registry_actor_class
from covey.registry.limits import Limits
from covey.registry.records import FinalReport
from covey.runtime import SessionRuntime
from covey.session_defs import managed_agents_dir, session_definitions, session_plugins, session_skills
from covey.settings import Settings
from covey.settings_guard import check_mode, cli_rules, managed_hooks_only, start_mode
from covey.settings_managed import managed_dir
from covey.skills import skill_list_message
from covey.teams.messages import UserMessage
from covey.tool_names import canonical_tool_name
from covey.tools.catalog import tool_names
from covey.tools.options import ToolOptions

log = logging.getLogger(__name__)

STOP_GRACE_S = 5.0
OWNER_DEATH_WAIT_S = 2.0
"""How long a main actor's death waits to be explained by its owner's (the registry's)."""
INTERRUPTED = "[Request interrupted by user]"
"""An interrupted turn's result (Claude Code's words for it)."""
MAIN_DEFINITION = AgentDefinition(name="main", description="The session's main agent.", prompt=MAIN_PROMPT)


class SessionOptions(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    cwd: str = "."
    env: dict[str, str] | None = None
    """The run's environment; None: this process's. The session reads its API key, base URL, model
    aliases, ``COVEY_*`` switches and limits, and ``HOME`` (user settings, agents, skills, transcripts)
    from it, and every agent's Bash, Grep and command hooks run with it."""
    model: Any = None
    """Where replies come from: ``scripted:PATH``, a Model object, or an alias/id (Anthropic)."""
    model_id: str | None = None
    """The main agent's model alias or id; default: settings' ``model``, else sonnet."""
    permission_mode: str | None = None
    allowed_tools: list[str] = Field(default_factory=list)
    disallowed_tools: list[str] = Field(default_factory=list)
    max_turns: int = 100
    address: str | None = None
    """A Ray cluster to join; default ``RAY_ADDRESS`` or a local Ray started on demand."""
    settings: dict[str, Any] | None = None
    """Extra settings, as in a settings.json (highest precedence, source ``cliArg``)."""
    on_permission: Callable[..., Any] | None = None
    """Asked when a tool call needs a person's approval: ``fn(request) -> bool``."""
    asker: Any = None
    """An Asker object (e.g. TerminalAsker); ``on_permission`` wraps into one."""
    agents: list[AgentDefinition] | str | dict | None = None
    """Extra agent definitions: objects, or Claude Code's ``--agents`` JSON."""
    limits: Limits | None = None
    pool_size: int | None = None
    """Warm agent actors kept ready (default ``COVEY_POOL_SIZE`` or 4 per CPU, 4..16)."""
    transcript_dir: str | None = None
    """Where transcripts go (default ``~/.covey/transcripts``, ``~`` being the env's ``HOME`` when ``env`` is given)."""
    shared_fs: bool | None = None
    """The working tree is on a filesystem every node mounts: file-touching agents may run anywhere
    (default ``COVEY_SHARED_FS=1``)."""
    teams: bool | None = None
    """Team tools (TeamCreate, SendMessage, Task*) and named teammates (default ``COVEY_ENABLE_TEAMS=1``)."""
    coordinator: bool | None = None
    """Coordinator mode (docs/coordinator.md): the main agent directs ``worker`` agents, every spawn
    is async, and it continues a worker with SendMessage (default ``COVEY_COORDINATOR_MODE=1`` or
    Claude Code's ``CLAUDE_CODE_COORDINATOR_MODE=1``)."""
    system_prompt: str | None = None
    """The main agent's system prompt in place of covey's (``--system-prompt``; "" for none)."""
    append_system_prompt: str | None = None
    """Text added after the main agent's system prompt (``--append-system-prompt``)."""
    tools: list[str] | None = None
    """The main agent's base tool set by name (``--tools``); None: every tool, []: none."""
    additional_directories: list[str] = Field(default_factory=list)
    """Directories besides the project that file tools may use without asking (``--add-dir``)."""
    plugin_dirs: list[str] = Field(default_factory=list)
    """Plugin folders loaded for this session (``--plugin-dir``), besides those settings enable."""
    mcp_servers: list[Any] | dict[str, Any] | None = None
    """MCP servers (docs/mcp.md): ``{name: config}``, ``{"mcpServers": {...}}``, or a list of these and
    ``--mcp-config`` values (JSON text or a file); over the user, project and local configs."""
    strict_mcp_config: bool = False
    """Only ``mcp_servers``' servers, none from the config files (``--strict-mcp-config``)."""
    setting_sources: list[str] | None = None
    """Which settings files to read: ``user``, ``project``, ``local`` (``--setting-sources``); None: all."""
    session_id: str | None = None
    """The session's id (a UUID, ``--session-id``); default a new one."""
    resume: str | None = None
    """Continue the session with this id from its transcript (``--resume``)."""
    continue_conversation: bool = False
    """Continue the most recent session of this directory (``--continue``)."""
    fork_session: bool = False
    sdk_hooks: dict[str, Any] | None = None
    """Hooks a claude-agent-sdk client registered (its ``initialize``): ``{event: [{matcher,
    hookCallbackIds, timeout}]}``; ``on_hook_callback`` runs them."""
    on_hook_callback: Callable[..., Any] | None = None
    """``async (callback_id, payload, tool_use_id) -> output``: runs an SDK hook callback."""
    include_partial_messages: bool = False
    """Also stream the main agent's replies as they arrive: Claude Code's ``stream_event`` lines
    (``--include-partial-messages``). Only a streaming model (the Messages API) has them."""
    fallback_model: str | None = None
    """Where the Messages API requests of every agent go once their model is overloaded past its
    retries (``--fallback-model``; alias or id). A scripted model has no use for it."""
    max_budget_usd: float | None = None
    """The session's dollar budget (``--max-budget-usd``): spawns past it are refused."""
    """With ``resume`` / ``continue_conversation``: continue under a new session id (``--fork-session``)."""
    verbose: bool = False
    service: bool | None = None
    """Borrow the session's actors from the covey service (``COVEY_SERVICE=1``): its warm
    pool and ready session actors, on its Ray; a service is started if none runs."""


class Session:
    """One covey session: ``await Session(...).run(prompt)`` or ``async for e in session.stream(prompt)``."""

    def __init__(self, **options: Any) -> None:
        given = SessionOptions(**options)
        self.env: dict[str, str] = dict(given.env) if given.env is not None else dict(os.environ)
        """The run's environment (a copy): the session reads it, never ``os.environ``. Agents get
        it only when ``env`` was given; otherwise they keep their actor's own, as before."""
        self.home = Path(self.env["HOME"]) if given.env is not None and self.env.get("HOME") else None
        """Where the user's settings, agents and skills are (``None``: this process's home)."""
        self.options = given.model_copy(update=_env_defaults(given, self.env, self.home))
        self.cwd = Path(self.options.cwd).resolve()
        self.resumed = self._resume_point()
        """Where a resumed session continues (``resume`` / ``continue_conversation``), else None."""
        self.session_id = self._chosen_session_id()
        self.settings = Settings.load(self.cwd, home=self.home, extra=self.options.settings,
                                      sources=self.options.setting_sources, managed_dir=managed_dir())
        self.plugins = session_plugins(self.cwd, self.settings, plugin_dirs=self.options.plugin_dirs,
                                       home=self.home, env=self.env)
        if self.options.sdk_hooks:
            self.settings.add_hooks(sdk_hook_settings(self.options.sdk_hooks), "hooks of the claude-agent-sdk client")
        recorded = self.resumed.record.model_id if self.resumed else None
        name = self.options.model_id or _model_name(self.options.model) or recorded or self.settings.model or DEFAULT_MODEL
        self.model_id = resolve_model(name, env=self.env)
        if not hasattr(self.options.model, "create"):
            # A missing API key or a bad rule file fails here, before Ray starts. The built
            # model travels to every agent actor, so nodes need no key or rule file of their own.
            # Without an explicit env the SDK finds the credentials itself (profiles included).
            self.options.model = make_model(self.options.model, env=self.options.env)
        if self.options.fallback_model:
            self._use_fallback(resolve_model(self.options.fallback_model, env=self.env))
        if self.options.permission_mode is not None:
            _check_mode(self.options.permission_mode)
        mode, mode_notes = start_mode(self.settings, explicit=self.options.permission_mode,
                                      resumed=self.resumed.record.permission_mode if self.resumed else None)
        cli_allow, cli_deny, rule_notes = cli_rules(self.settings, self.options.allowed_tools, self.options.disallowed_tools)
        self.policy = PermissionPolicy.from_settings(
            self.settings,
            mode=mode,
            cli_allow=cli_allow,
            cli_deny=cli_deny,
            project_root=self.cwd,
            home=self.home,
            additional_directories=[Path(d).resolve() for d in self.options.additional_directories],
            readable=self._readable(),
        )
        self.asker = self.options.asker or (CallbackAsker(self.options.on_permission) if self.options.on_permission else None)
        self.limits = self.options.limits or Limits.from_env(self.env)
        if self.options.max_budget_usd is not None:
            self.limits = self.limits.model_copy(update={"budget_usd": self.options.max_budget_usd})
        plugins, locked = list(self.plugins.plugins.values()), self.settings.strict_plugin_only
        self.definitions, self.definition_errors, skipped_hooks = session_definitions(
            self.cwd, self.options.agents, home=self.home, plugins=plugins,
            policy_dir=managed_agents_dir(self.settings), locked=locked, coordinator=self.options.coordinator,
        )
        self.definitions, hook_notes = managed_hooks_only(self.definitions, self.settings)
        self.mcp = self._mcp_servers()
        self.skills, self.skill_errors = session_skills(self.cwd, home=self.home, plugins=plugins,
                                                        managed_dir=self.settings.managed_dir, locked=locked)
        # What was skipped while loading (unsupported hooks, plugins, definition and skill
        # files that failed): the run goes on without it, so it is said once, up front.
        self.warnings: list[str] = [
            *(str(w) for w in (*self.settings.warnings, *skipped_hooks)),
            *(str(problem) for problem in self.plugins.problems),
            *(f"{e}; agent definition not loaded" for e in self.definition_errors),
            *(f"{e}; skill not loaded" for e in self.skill_errors),
            *self.mcp.warnings, *mode_notes, *rule_notes, *hook_notes,
        ]
        for warning in self.warnings:
            log.warning("%s", warning)
        self.runtime: SessionRuntime | None = None
        self._started_ray = False
        self._lender: SharedPoolHandle | None = None
        """The covey service's shared pool, for a served session."""
        self._lost_actor = False
        """One of the session's own actors died (``SessionBroken``): its kit is not reused."""
        self._owned: list[Any] = []
        self.main_agent_id: str = self.resumed.record.main_agent_id if self.resumed else AgentId.new()
        """The main agent: one id over every turn of the conversation (its transcript continues)."""
        self.turns = 0
        """Turns this Session has run; after the first (or on resume) a turn continues the conversation."""
        self._current_main: AgentHandle | None = None
        self._interrupting = False
        self.hold_main = False
        """Keep the main agent's actor between turns (a conversation); ``release_main`` gives it back."""
        self._held_main: AgentHandle | None = None
        self.kept_worktrees: list[dict[str, Any]] = []
        self._ended = False
        """SessionEnd hooks ran (``close`` may be called more than once)."""
        """Worktrees that agents stopped by ``stop`` kept (they had changes): path and branch."""

    # -- the run ------------------------------------------------------------------

    def tool_names(self) -> list[str]:
        """Every tool minus those removed whole by a bare ``--disallowed-tools`` name."""
        removed = {name for name in self.options.disallowed_tools if "(" not in name}
        names = [name for name in tool_names(self._tool_options()) if name not in removed]
        if self.options.coordinator:  # the coordinator directs workers; they do the work
            names = coordinator_tools(names)
        if self.options.tools is None:
            return names
        wanted = {canonical_tool_name(name) for name in self.options.tools}
        return [name for name in names if name in wanted]

    def _mcp_servers(self) -> Any:
        """The session's MCP servers (``McpSources``): config files, then the caller's."""
        given = self.options.mcp_servers
        given = [given] if isinstance(given, dict) else list(given or [])
        return session_servers(self.cwd, home=self.home, env=self.env, given=given,
                               strict=self.options.strict_mcp_config, locked="mcp" in self.settings.strict_plugin_only)

    async def mcp_status(self) -> list[dict[str, Any]]:
        """The SDK's ``mcp_status``: each configured server connected now, its tools listed, then
        stopped (a health check like ``claude mcp list``; the agents' own clients live in their actors)."""
        if not self.mcp.servers:
            return []
        from covey.mcp.listing import probe

        return await probe(self.mcp.servers, cwd=str(self.cwd), env=self.env)

    def init_event(self) -> SystemInit:
        return SystemInit(
            session_id=self.session_id, cwd=str(self.cwd), model=self.model_id, tools=self.tool_names(),
            permissionMode=self.policy.mode, agents=sorted(self.definitions), skills=sorted(self.skills),
            slash_commands=sorted(self.skills),
            # Each agent connects its servers where it runs: at init they are still starting.
            mcp_servers=[{"name": name, "status": "pending"} for name in self.mcp.servers],
            plugins=[plugin.init_entry() for plugin in self.plugins.plugins.values()],
            apiKeySource=_api_key_source(self.env, self.options.model),
            additional_directories=[str(Path(d).resolve()) for d in self.options.additional_directories],
        )

    async def stream(self, prompt: str | None) -> AsyncIterator[Event]:
        """One turn of the conversation, its events as they happen: ``system/init`` first, like
        Claude Code. The first turn starts the session; each later one (and a resumed
        session's first) continues the main agent's conversation from its transcript.
        ``None``: a turn on what waits in the main agent's mailbox (``mail_waiting``): a
        notice that came between turns, messages ``send`` queued."""
        if prompt is None and self.turns == 0 and self.resumed is None:
            raise UserError("a conversation's first turn needs a prompt")
        runtime = await self.start()
        yield self.init_event()
        main, self._held_main = self._held_main, None
        if main is None:
            main = await runtime.registry.take("home")
            self._owned.append(main)
        self._current_main = main
        runtime.set_root(main, self.options.model)
        spec = self.main_spec(prompt, runtime)
        output_file = str(transcript_path(spec.transcript_dir, spec.session_id, spec.agent_id))
        await runtime.registry.register_main(spec.agent_id, spec.model_id, spec.cwd, prompt or "", output_file, main.node)
        self._record_session()
        ended, in_turn = False, True
        noticed: str | None = None
        """The run id of the last background task that notified the main agent."""
        origin: dict[str, Any] | None = None
        try:
            try:
                async for event in self._watched(main.events(spec)):
                    if isinstance(event, PermissionPrompt):
                        await main.answer(event.request_id, await self._ask(event))
                        continue
                    if isinstance(event, HookCallbackPrompt):
                        await main.answer(event.request_id, await self._hook_callback(event))
                        continue
                    mine = event.agent_id in (None, spec.agent_id)
                    if isinstance(event, TaskNotification):
                        noticed = event.run_id
                    if mine and isinstance(event, ResultEvent):
                        ended, in_turn = True, False
                        event = await self._with_session_spend(event, origin)
                        origin = None
                    elif mine and _is_turn_input(event):
                        # A notice (a background child's) or a queued message starts the main agent's
                        # next turn: Claude Code announces a turn with system/init and prints no
                        # user message for it (the transcript keeps it).
                        if not in_turn:
                            in_turn = True
                            if noticed and "<task-notification>" in str(event.message.get("content")):
                                origin = {"kind": "task-notification", "producer": "session-task", "runId": noticed}
                            yield self.init_event()
                        continue
                    yield event
            except SessionBroken as exc:
                yield await self._broken(exc, spec)
                return
            except asyncio.CancelledError:
                # Interrupted (Ctrl-C, SIGTERM, a cancelled cell): every agent is stopped
                # and its cleanup runs before the session's actors go.
                await asyncio.shield(self.stop("the run was interrupted"))
                raise
            report = main.last_report or await main.wait()
            finishing = runtime.registry.finish_main(spec.agent_id, report)
            self.turns += 1
            if runtime.teams:
                await finishing
            elif self.hold_main and report.status != "failed":
                # A conversation's next turn runs on the same actor (no trip to the pool and back).
                self._held_main = main
                await finishing
            else:
                # Its run is over and nothing lives on it: it goes back to the pool (the
                # session's, or the covey service's), warm for the next turn or run, which
                # takes one from there (the conversation is in the transcript). The pool
                # keeps a bounded few and kills the rest, and one whose reset finds
                # leftovers: a notebook's hundredth run holds no hundred idle processes.
                self._owned.remove(main)
                await asyncio.gather(finishing, runtime.registry.release(main))
            if not ended and self._interrupting:
                yield _failure(report.model_copy(update={"text": INTERRUPTED}), self.session_id, spec.agent_id)
            elif not ended:
                # The agent failed before its loop could report (a bad hook, a blocked
                # prompt, a crash): the cause travelled in its report, so the turn ends on it.
                yield _failure(report, self.session_id, spec.agent_id)
        finally:
            # Otherwise the main actor stays until close(): teams it created live on it, and
            # an interrupted run must first cancel its sync children from inside it.
            self._current_main = None
            self._interrupting = False
            runtime.set_root(None)

    async def release_main(self) -> None:
        """Give the actor held between a conversation's turns back to the pool."""
        main, self._held_main = self._held_main, None
        if main is not None and self.runtime is not None:
            self._owned.remove(main)
            await self.runtime.registry.release(main)

    async def send(self, prompt: str) -> None:
        """A user message while a turn runs: the main agent reads it at its next step (or the
        next turn reads it, ``mail_waiting``), as Claude Code takes a message typed while it works."""
        if self.runtime is None:
            raise UserError("the session has not started: send the first prompt with stream()")
        await self.runtime.mailbox.put(self.main_agent_id, UserMessage(text=prompt))

    async def mail_waiting(self) -> bool:
        """Whether mail for the main agent waits with no turn to read it (a notice, a message)."""
        if self.runtime is None or self._current_main is not None:
            return False
        return await self.runtime.mailbox.pending(self.main_agent_id) > 0

    async def background_running(self) -> bool:
        """Whether agents the main agent owns may still notify it."""
        if self.runtime is None:
            return False
        return bool(await self.runtime.registry.outstanding(self.main_agent_id))

    async def interrupt(self, reason: str = "interrupted by the user") -> bool:
        """Stop the current turn (Claude Code's interrupt): the main agent's run and its sync
        children end, background agents keep running; the turn's result says so. False
        if no turn runs."""
        main = self._current_main
        if main is None:
            return False
        self._interrupting = True
        return bool(await main.cancel("killed", reason))

    async def stop_task(self, task_id: str) -> bool:
        """Kill one agent of this session by id (``stop_task``); its owner is notified."""
        if self.runtime is None:
            return False
        return bool(await self.runtime.registry.kill_agent(task_id, "stopped by the client"))

    def set_permission_mode(self, mode: str) -> None:
        """The main agent's permission mode from the next turn on (``set_permission_mode``)."""
        _check_mode(mode)
        check_mode(mode, self.settings, "set_permission_mode")
        self.policy.mode = mode

    def set_model(self, model: str | None) -> None:
        """The main agent's model from the next turn on (``set_model``; None: the default)."""
        self.model_id = resolve_model(model or self.settings.model or DEFAULT_MODEL, env=self.env)

    def _use_fallback(self, fallback: str) -> None:
        if fallback == self.model_id:
            raise UserError(f"--fallback-model {fallback} is the main model: name another model")
        if hasattr(self.options.model, "fallback_model"):
            self.options.model.fallback_model = fallback

    def _resume_point(self) -> Any:
        if not (self.options.resume or self.options.continue_conversation):
            return None
        from covey.resume import find_resume

        point = find_resume(self._transcript_root(), session_id=self.options.resume,
                            continue_in=None if self.options.resume else self.cwd)
        if self.options.fork_session:
            from covey.resume import fork_point

            point = fork_point(point, self.options.session_id or new_session_id())
        return point

    def _chosen_session_id(self) -> str:
        if self.resumed is not None:
            return self.resumed.record.session_id
        if self.options.session_id is None:
            return new_session_id()
        from covey.resume import ResumeError, session_exists, validate_session_id

        chosen = validate_session_id(self.options.session_id)
        if session_exists(self._transcript_root(), chosen):
            raise ResumeError(f"session id {chosen} is already in use: continue it with --resume {chosen}")
        return chosen

    def _readable(self) -> list[Path]:
        """What covey keeps for this session that its agents read without asking: the session's
        transcripts (a background child's output file) and this user's task output folder."""
        return [self._transcript_root() / self.session_id, Path(tempfile.gettempdir()) / f"covey-{os.getuid()}"]

    def _transcript_root(self) -> Path:
        if self.options.transcript_dir:
            return Path(self.options.transcript_dir).expanduser()
        return DEFAULT_TRANSCRIPT_DIR.expanduser()

    def _record_session(self) -> None:
        """The session's index entry beside its transcripts (what ``--resume`` / ``--continue``
        find): written at its first turn, then updated at each one (model, mode, time)."""
        from covey.resume import ResumeError, SessionRecord, read_record, record_session

        root = self._transcript_root()
        try:
            try:
                record = read_record(root, self.session_id).model_copy(update={
                    "model_id": self.model_id, "permission_mode": self.policy.mode, "updated_s": time.time()})
            except ResumeError:
                record = SessionRecord.new(root, session_id=self.session_id, main_agent_id=self.main_agent_id,
                                           cwd=self.cwd, model_id=self.model_id, permission_mode=self.policy.mode)
            record_session(root, record)
        except (OSError, ResumeError) as exc:  # the run goes on; only resuming it later is lost
            log.warning("the session index in %s could not be written: %s", root, exc)

    async def _watched(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        """``events``, until the main agent's, the registry's or the mailbox's actor dies:
        then ``SessionBroken`` names it. Without the registry or the mailbox no agent can
        launch, finish or be notified, so the run cannot go on and must not hang."""
        runtime = self.runtime
        gone = {asyncio.ensure_future(handle.until_gone()): what
                for handle, what in ((runtime.registry, "registry"), (runtime.mailbox, "mailbox"))}
        stream, step = events.__aiter__(), None
        try:
            while True:
                step = asyncio.ensure_future(stream.__anext__())
                await asyncio.wait({step, *gone}, return_when=asyncio.FIRST_COMPLETED)
                if not step.done():
                    dead = next(task for task in gone if task.done())
                    raise SessionBroken(f"covey's {gone[dead]} actor died ({dead.result()})")
                try:
                    event = step.result()
                except StopAsyncIteration:
                    return
                except AgentUnavailable as exc:
                    # The main actor dies with the registry that owns it: name the cause.
                    dead, _ = await asyncio.wait(gone, timeout=OWNER_DEATH_WAIT_S)
                    if dead:
                        died = next(iter(dead))
                        raise SessionBroken(f"covey's {gone[died]} actor died ({died.result()})") from None
                    raise SessionBroken(f"the main agent's actor died ({exc})") from None
                yield event
        finally:
            for task in (step, *gone):
                if task is not None:
                    task.cancel()

    async def _broken(self, exc: "SessionBroken", spec: AgentSpec) -> ResultEvent:
        """Stop what is left of a session that lost an actor; its error result."""
        self._lost_actor = True
        await self.stop(str(exc))
        text = f"{exc}: the run cannot go on, and every agent of the session was stopped."
        return ResultEvent.failure(text, session_id=self.session_id, agent_id=spec.agent_id)

    async def stop(self, reason: str, grace_s: float = STOP_GRACE_S) -> list[dict[str, Any]]:
        """Stop every agent of this session, each with its cleanup (a kept worktree stays,
        and is returned); what does not stop in ``grace_s`` is killed by ``close``."""
        if self.runtime is None:
            return []
        mains = [handle for handle in self._owned if isinstance(handle, AgentHandle)]
        stopping = [asyncio.wait_for(main.cancel("killed", reason), grace_s) for main in mains]
        stopping.append(asyncio.wait_for(self.runtime.registry.stop_all(reason), grace_s * 2))
        done = await asyncio.gather(*stopping, return_exceptions=True)
        kept = done[-1] if isinstance(done[-1], list) else []
        self.kept_worktrees += kept
        return kept

    async def _with_session_spend(self, result: ResultEvent, origin: dict[str, Any] | None = None) -> ResultEvent:
        """The main agent's result as Claude Code's: ``total_cost_usd`` and ``modelUsage``
        count every agent's requests (sub-agents of any kind, killed and failed ones too),
        ``usage`` the main agent's own. The registry has heard of every main-agent turn
        before its result comes (``Progress``); a sub-agent's, once it has reported."""
        cost_usd, model_usage = await self.runtime.registry.session_usage()
        return result.model_copy(update={"total_cost_usd": round(cost_usd, 6), "modelUsage": model_usage,
                                         "origin": origin})

    async def run(self, prompt: str, *, live: bool | None = None) -> "RunResult":
        """Run ``prompt`` to its end. ``live``: show the agent tree updating under the
        running cell (default: on in a Jupyter kernel, off elsewhere)."""
        if live if live is not None else in_notebook():
            async with self.live_tree():
                events = [event async for event in self.stream(prompt)]
        else:
            events = [event async for event in self.stream(prompt)]
        tree = await self.tree()
        return RunResult.from_events(events, tree)

    def live_tree(self, interval_s: float = 0.5) -> TreeDisplay:
        """A notebook display of the agent tree that updates while the block inside runs::

            async with session.live_tree():
                async for event in session.stream(prompt): ...
        """
        return TreeDisplay(self.tree, interval_s)

    async def tree(self) -> dict[str, Any]:
        """The agent tree with statuses and rolled-up usage (empty before a run)."""
        if self.runtime is None:
            return {}
        return await self.runtime.registry.tree()

    def main_spec(self, prompt: str | None, runtime: SessionRuntime) -> AgentSpec:
        history = self._history(runtime)
        return AgentSpec(
            session_id=self.session_id,
            agent_id=self.main_agent_id,
            definition=MAIN_DEFINITION,
            prompt=prompt or "",
            history=history,
            next_prompt=prompt if history else None,
            # A resumed session's first turn fires SessionStart as "resume" (or "fork"); a fresh one "startup".
            session_source=("fork" if self.options.fork_session else "resume") if self.resumed and self.turns == 0 else None,
            model=self.options.model,
            model_id=self.model_id,
            effort=effort_from_env(self.env),
            cwd=str(self.cwd),
            system=system_blocks(self._main_prompt(), str(self.cwd), self.model_id),
            prelude=self._main_prelude(runtime),
            tool_names=self.tool_names(),
            permissions=self.policy,
            max_turns=self.options.max_turns,
            transcript_dir=self.options.transcript_dir,
            runtime=runtime,
            settings=RunSettings(
                model_prices=self.settings.model_prices, can_ask=self.asker is not None,
                model_limits=self.settings.model_limits, auto_compact=self.settings.auto_compact_enabled is not False,
                partial_messages=self.options.include_partial_messages,
                hooks=self.settings.hooks, project_dir=str(self.cwd), session_transcript=self._transcript(),
                # Only an explicit env travels: without one, agents keep their actor's own, as
                # before (a node's PATH and HOME are its own).
                env=self.options.env,
                mcp_servers=self.mcp.servers,
                bypass_disabled=self.settings.bypass_disabled is not None,
            ),
        )

    def _history(self, runtime: SessionRuntime) -> list[dict[str, Any]] | None:
        """The conversation so far, for a turn after the first (or a resumed session's first)."""
        if self.turns == 0 and self.resumed is not None:
            return list(self.resumed.history)
        if self.turns == 0:
            return None
        from covey.agents.transcript import rebuild_history

        path = transcript_path(self.options.transcript_dir, self.session_id, self.main_agent_id)
        return rebuild_history(path) if path.exists() else None

    def _transcript(self) -> str:
        """The main agent's transcript: what every hook payload calls ``transcript_path``."""
        return str(transcript_path(self.options.transcript_dir, self.session_id, self.main_agent_id))

    def _main_prompt(self) -> str:
        default = coordinator_prompt() if self.options.coordinator else MAIN_PROMPT
        prompt = default if self.options.system_prompt is None else self.options.system_prompt
        if self.options.append_system_prompt:
            prompt = f"{prompt}\n\n{self.options.append_system_prompt}" if prompt else self.options.append_system_prompt
        return prompt

    def _main_prelude(self, runtime: SessionRuntime | None) -> list[dict[str, Any]]:
        cwd = str(self.cwd)
        snapshot = runtime.project_context.get(cwd) if runtime is not None else None
        context = snapshot if snapshot is not None else project_context(cwd, omit=False)
        listing = skill_list_message(self.skills) if "Skill" in self.tool_names() else None
        workers = [self._workers_message()] if self.options.coordinator else []
        return [*context, agent_list_message(self.definitions), *workers, *([listing] if listing else [])]

    def _workers_message(self) -> dict[str, Any]:
        """What the coordinator is told its workers can use (their tools, in the background)."""
        available = tool_names(self._tool_options())
        return workers_message(worker_tools(self.definitions, available, max_depth=self.limits.max_depth))

    def _tool_options(self) -> ToolOptions:
        background_disabled = env_flag(self.env, "COVEY_DISABLE_BACKGROUND_TASKS")
        # Claude Code turns forking off in coordinator mode: every spawn there is a worker.
        fork = not self.options.coordinator and fork_enabled(self.env, self.settings.fork_subagent, self.settings.env)
        return ToolOptions(background_disabled=background_disabled, teams=self.options.teams,
                           coordinator=self.options.coordinator, fork=fork)

    # -- session actors -------------------------------------------------------------

    async def start(self) -> SessionRuntime:
        """Join or start Ray and start the session's actors (idempotent); a served session
        borrows ready ones from the covey service instead."""
        if self.runtime is not None:
            return self.runtime
        if self.options.service:
            registry, mailbox = await self._borrowed_actors()
        else:
            registry, mailbox = self._own_actors()
        spread = sum(1 for node in ray.nodes() if node.get("Alive")) > 1
        self.runtime = SessionRuntime(
            session_id=self.session_id, registry=registry, mailbox=mailbox,
            definitions=self.definitions, limits=self.limits, transcript_dir=self.options.transcript_dir,
            can_ask=self.asker is not None, skills=self.skills, tools=self._tool_options(),
            tool_names=tool_names(self._tool_options()), spread=spread, shared_fs=self.options.shared_fs,
            project_context={str(self.cwd): await asyncio.to_thread(project_context, str(self.cwd), omit=False)},
            env=self.options.env,
        )
        return self.runtime

    def _own_actors(self) -> tuple[RegistryHandle, MailboxHandle]:
        """A private registry (with its own warm pool) and mailbox, on the driver's node."""
        self._started_ray = ensure_ray(self.options.address, verbose=self.options.verbose)
        prefix = f"covey:{self.session_id[:8]}"
        home = ray.get_runtime_context().get_node_id()
        # The session's own actors live with the driver: losing another node must not lose them.
        common = {"namespace": NAMESPACE, "scheduling_strategy": NodeAffinitySchedulingStrategy(home, soft=False)}
        spread = sum(1 for node in ray.nodes() if node.get("Alive")) > 1
        size = self.options.pool_size if self.options.pool_size is not None else default_pool_size()
        sizes = {"home": size, "any": size} if spread else {"home": size}
        mailbox = MailboxHandle(mailbox_actor_class().options(name=f"{prefix}:mailbox", **common).remote(), "mailbox")
        registry_actor = registry_actor_class().options(name=f"{prefix}:registry", **common).remote(
            self.limits, mailbox, self.session_id, sizes, home, model_modules(self.options.model),
        )
        registry = RegistryHandle(registry_actor, "registry")
        self._owned += [registry, mailbox]
        return registry, mailbox

    async def _borrowed_actors(self) -> tuple[RegistryHandle, MailboxHandle]:
        """The covey service's ready session kit: a registry that borrows agent actors from
        the service's shared pool, and a mailbox. The session takes the kit's id."""
        if not ray.is_initialized():
            from covey.service.attach import join_service

            join_service(self.options.verbose)
        self._lender = SharedPoolHandle.named(pool_name())
        # A resumed session, or one given its id, keeps its id; any other takes the kit's.
        fixed = self.session_id if (self.resumed is not None or self.options.session_id) else None
        kit = await self._lender.take_kit(model_modules(self.options.model), session_id=fixed)
        self.session_id = kit.session_id
        registry, mailbox = kit.handles()
        await registry.configure(self.limits)
        return registry, mailbox

    def close(self, reason: str = "other") -> None:
        """Run the SessionEnd hooks (``reason``: Claude Code's, ``other`` for a run that simply
        ended), then kill every actor this session started (pooled agents die with the registry that
        owns them; a served session's borrowed ones are ended by the service's pool), then
        Ray if covey started it."""
        if self.turns and not self._ended:
            self._ended = True
            fire_session_end(self.settings.hooks, reason=reason, project_dir=self.cwd, env=self.options.env,
                             session_id=self.session_id, transcript_path=self._transcript(), mode=self.policy.mode)
        if self._lender is not None and self.runtime is not None:
            # The kit's actors are the pool's: it kills or reuses them with what this session held.
            self._lender.end_session(self.session_id, reuse_kit=not (self.runtime.teams or self._lost_actor))
        for handle in reversed(self._owned):
            handle.kill()
        self._owned.clear()
        self.runtime = None
        shutdown_if_started(self._started_ray)
        self._started_ray = False

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "Session":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    async def _hook_callback(self, prompt: HookCallbackPrompt) -> Any:
        """The SDK client's answer to one of its hooks; None (the hook failed) if it cannot answer."""
        if self.options.on_hook_callback is None:
            return None
        try:
            return await self.options.on_hook_callback(prompt.callback_id, prompt.input, prompt.tool_use_id)
        except Exception as exc:  # the hook failed; the agent's run goes on, as after a failing command hook
            log.warning("the SDK's hook callback %s failed: %s", prompt.callback_id, exc)
            return None

    async def _ask(self, prompt: PermissionPrompt) -> Any:
        if self.asker is None:
            return False
        request = PermissionRequest(
            tool_name=prompt.tool_name, subject=prompt.subject, input=prompt.input, message=prompt.message,
            reason=prompt.reason or "asked by an agent", suggested_rule="", tool_use_id=prompt.tool_use_id,
            # The main agent's own prompt names no agent (Claude Code's can_use_tool does the same).
            agent_id=None if prompt.agent_id == self.main_agent_id else prompt.agent_id,
        )
        return await self.asker(request)


def _api_key_source(env: dict[str, str], model: Any) -> str:
    """``system/init``'s ``apiKeySource``: which variable the Messages API key comes from."""
    if isinstance(model, ScriptedModel):  # no Messages API, no key
        return "none"
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        if env.get(name):
            return name
    return "none"


def _is_turn_input(event: Event) -> bool:
    """A user message of text only: a notice or queued message the loop took, not tool results."""
    if not isinstance(event, UserEvent):
        return False
    content = event.message.get("content")
    return isinstance(content, list) and all(block.get("type") == "text" for block in content)


class SessionBroken(CoveyError):
    """One of the session's own actors died: the run ends with an error naming it."""


def _failure(report: FinalReport, session_id: str, agent_id: str) -> ResultEvent:
    return ResultEvent.failure(
        report.text, session_id=session_id, agent_id=agent_id, num_turns=report.turns or 0,
        duration_ms=report.duration_ms, total_cost_usd=report.cost_usd, usage=report.usage.model_dump(),
    )


def _env_defaults(options: SessionOptions, env: dict[str, str], home: Path | None) -> dict[str, Any]:
    """The options left unset, as the run's environment sets them: ``start`` reads them from the options."""
    defaults: dict[str, Any] = {
        "shared_fs": env_flag(env, "COVEY_SHARED_FS") if options.shared_fs is None else options.shared_fs,
        "teams": env_flag(env, "COVEY_ENABLE_TEAMS") if options.teams is None else options.teams,
        "coordinator": coordinator_mode(env) if options.coordinator is None else options.coordinator,
        "pool_size": default_pool_size(env) if options.pool_size is None else options.pool_size,
        "service": env_flag(env, "COVEY_SERVICE") if options.service is None else options.service,
    }
    if options.transcript_dir is None and home is not None:
        defaults["transcript_dir"] = str(home / DEFAULT_TRANSCRIPT_DIR.relative_to("~"))
    return defaults


def _model_name(model: Any) -> str | None:
    """``--model sonnet`` names the model id; ``scripted:PATH`` and objects do not."""
    if isinstance(model, str) and not model.startswith(SCRIPTED_PREFIX) and model != "anthropic":
        return model
    return None


class RunResult(BaseModel):
    """What a finished run returns: the final answer with usage, cost, the agent tree and every event."""

    result: str
    is_error: bool
    num_turns: int
    """The main agent's turns over the whole run (every result's, summed)."""
    total_cost_usd: float
    """What the whole session spent: the main agent and every sub-agent."""
    usage: dict[str, int]
    """The main agent's own tokens over the whole run."""
    model_usage: dict[str, ModelUsage] = Field(default_factory=dict)
    """The session's tokens and cost per model (Claude Code's ``modelUsage``)."""
    session_id: str
    agents: dict[str, Any] = Field(default_factory=dict)
    """The agent tree: each agent's type, status, tokens and cost, with its children."""
    events: list[Any] = Field(default_factory=list, repr=False)

    @classmethod
    def from_events(cls, events: list[Event], tree: dict[str, Any] | None = None) -> "RunResult":
        results = [e for e in events if isinstance(e, ResultEvent)]
        tree = tree or {}
        if not results:
            return cls(result="the run ended without a result", is_error=True, num_turns=0,
                       total_cost_usd=0.0, usage={}, session_id="", agents=tree, events=events)
        last = results[-1]
        # Each result reports its turn (a notification-driven turn after the first has its own);
        # the run is all of them. Cost and usage per model are the session's already.
        usage: dict[str, int] = {}
        for result in results:
            for key, value in result.usage.items():
                usage[key] = usage.get(key, 0) + value
        return cls(result=last.result, is_error=last.is_error, num_turns=sum(r.num_turns for r in results),
                   total_cost_usd=last.total_cost_usd, usage=usage, model_usage=last.modelUsage,
                   session_id=last.session_id, agents=tree, events=events)


def run(prompt: str, *, live: bool | None = None, **options: Any) -> RunResult:
    """Run one prompt to its end, synchronously (scripts, Ray jobs, notebooks); options as ``Session``.

    ``live``: the agent tree as a display that updates while agents work (default: in a Jupyter kernel).
    """
    live = in_notebook() if live is None else live

    async def go() -> RunResult:
        with Session(**options) as session:
            return await session.run(prompt, live=live)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(go())
    # Inside a running loop (Jupyter): run on a private loop in a worker thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, go()).result()


def _check_mode(mode: str) -> None:
    """``bubble`` is a run mode too: the main agent's prompts go to the session's asker, as in ``default``."""
    if mode not in RUN_MODES:
        raise UserError(f"permission mode {mode!r} is not one a session runs in: use one of {', '.join(RUN_MODES)}")
