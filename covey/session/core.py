"""``Session``: one covey run from a script, a notebook, a Ray job or the CLI.

The driver side of covey: it joins or starts Ray, starts the session's registry (with its
warm pool) and mailbox actors, runs the main agent in an ``AgentActor``, answers permission
prompts that come up from any agent, and removes everything it started when it closes. Each
job is a module of this package; ``Session`` holds the session's state and its public calls.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from pathlib import Path
from typing import Any, AsyncIterator, ClassVar, cast

from covey.agent.handle import AgentHandle
from covey.runtime.spec import AgentSpec
from covey.errors import UserError
from covey.loop.steps import pending_calls
from covey.events import Event, SystemInit
from covey.ids import AgentId
from covey.model.aliases import DEFAULT_MODEL, resolve_model
from covey.observe.notebook import TreeDisplay, in_notebook
from covey.permissions.modes import PermissionMode
from covey.ray.address import check_run_address
from covey.runtime.session_runtime import SessionRuntime
from covey.session import ephemeral, kit, main_agent, teardown, turn
from covey.session.debug_log import DebugLog, open_debug_log
from covey.session.options import SessionOptions, check_mode
from covey.session.result import RunResult
from covey.session.setup import config_root, load, place, run_env, with_env_defaults
from covey.settings.guard import check_mode as check_allowed_mode
from covey.teams.messages import UserMessage


class Session:
    """One covey session: ``await Session(...).run(prompt)`` or ``async for e in session.stream(prompt)``.

    Takes a ``SessionOptions`` or its fields as keywords (``Session(cwd=..., model=...)``);
    ``Session(detach=True)`` makes a ``DetachedSession``, whose run lives in the covey service."""

    detached_kind: ClassVar[type[Session] | None] = None  # Session(detach=True) is one: covey.session.detached
    def __new__(cls, options: SessionOptions | None = None, /, *, detach: bool = False, **fields: Any) -> Session:
        return super().__new__((Session.detached_kind if detach and cls is Session else None) or cls)

    def __init__(self, options: SessionOptions | None = None, /, *, detach: bool = False, **fields: Any) -> None:
        if options is not None and fields:
            raise UserError(f"Session takes SessionOptions or keywords, not both (got {sorted(fields)})")
        given = options if options is not None else SessionOptions(**fields)
        check_run_address(given.address, os.environ, "address=")  # before any file or Ray is made
        self.env, self.home = run_env(given)
        self.options = with_env_defaults(given, self.env, self.home)
        self.cwd = Path(self.options.cwd).resolve()
        self.config_root = config_root(self.options, self.cwd)
        """Where the project's settings and definitions are read: ``project_config_root``, else ``cwd``."""
        self.private = ephemeral.private_folder(self.options)
        """A session that is not kept: the private folder its files go to, removed at its close."""
        self.debug: DebugLog | None = None
        try:
            placed = place(self.options, self.cwd, self.env, self.home, self.private)
            self.options, self.kept, self.roots, self.resumed = placed.options, placed.kept, placed.roots, placed.resumed
            self.session_id, self.transcript_folder = placed.session_id, placed.transcript_folder
            self.debug = open_debug_log(self.options.debug, self.kept.root, self.session_id, self.cwd)
            loaded = load(self.options, self.cwd, self.env, self.home, self.resumed, self.session_id)
        except BaseException:
            teardown.discard(self)
            raise
        self.settings, self.plugins, self.model_id = loaded.settings, loaded.plugins, loaded.model_id
        self.policy, self.asker, self.limits = loaded.policy, loaded.asker, loaded.limits
        self.definitions, self.definition_errors = loaded.definitions, loaded.definition_errors
        self.skills, self.skill_errors, self.mcp = loaded.skills, loaded.skill_errors, loaded.mcp
        self.output_style = loaded.output_style
        self.warnings = loaded.warnings
        """What was skipped while loading (hooks, plugins, definition and skill files): said once, up front."""
        self.kit = kit.Kit()
        self.main_agent_id: str = self.resumed.record.main_agent_id if self.resumed else AgentId.new()
        """The main agent: one id over every turn of the conversation (its transcript continues)."""
        self.turns = 0
        """Turns this Session has run; after the first (or on resume) a turn continues the conversation."""
        self.current_main: AgentHandle | None = None
        """The main agent's actor while a turn runs."""
        self.interrupting, self.conversation = False, False
        """A conversation (stream-json input): the main actor is kept between turns (``release_main``
        gives it back); a held result is shown once the notice that wakes the run is taken."""
        self.held_main: AgentHandle | None = None
        self.verbatim_prompt = False  # the next turn's prompt as written, no @file read (the SDK's verbatim_prompts)
        self.kept_worktrees: list[dict[str, Any]] = []
        """Worktrees that agents stopped by ``stop`` kept (they had changes): path and branch."""
        self.ended = False
        """SessionEnd hooks ran (``close`` may be called more than once)."""

    @property
    def runtime(self) -> SessionRuntime | None:
        """What every agent of the session shares, once ``start`` has run (None after ``close``)."""
        return self.kit.runtime

    # -- the main agent ---------------------------------------------------------------

    def tool_names(self) -> list[str]:
        """Every tool minus those removed whole by a bare ``--disallowed-tools`` name."""
        return main_agent.tool_names(self)

    def _main_prompt(self) -> str:
        return main_agent.main_prompt(self)

    def _main_prelude(self, runtime: SessionRuntime | None) -> list[dict[str, Any]]:
        return main_agent.main_prelude(self, runtime)

    def main_spec(self, prompt: str | None, runtime: SessionRuntime) -> AgentSpec:
        return main_agent.main_spec(self, prompt, runtime)

    def init_event(self) -> SystemInit:
        return main_agent.init_event(self)

    async def mcp_status(self) -> list[dict[str, Any]]:
        """The SDK's ``mcp_status``: each configured server connected now, its tools listed, then
        stopped (a health check like ``claude mcp list``; the agents' own clients live in their actors);
        one ``mcp_toggle`` turned off is ``disabled``, as Claude Code lists it."""
        from covey.mcp.listing import disabled_entry, probe

        servers: list[dict[str, Any]] = await probe(self.mcp.servers, cwd=str(self.cwd), env=self.env,
                                                   relay=self.options.on_mcp_message) if self.mcp.servers else []
        return [*servers, *(disabled_entry(name, config) for name, config in self.mcp.disabled.items())]

    # -- the run ----------------------------------------------------------------------

    def stream(self, prompt: str | None) -> AsyncIterator[Event]:
        """One turn of the conversation, its events as they happen: ``system/init`` first, like
        Claude Code. The first turn starts the session; each later one (and a resumed session's
        first) continues the main agent's conversation from its transcript. ``None``: a turn on
        what waits in the main agent's mailbox (``mail_waiting``): a notice that came between
        turns, messages ``send`` queued."""
        events = turn.stream(self, prompt)
        return events if self.debug is None else self.debug.follow(events)

    async def run(self, prompt: str, *, live: bool | None = None) -> RunResult:
        """Run ``prompt`` to its end. ``live``: show the agent tree updating under the running
        cell (default: on in a Jupyter kernel, off elsewhere)."""
        if live if live is not None else in_notebook():
            async with self.live_tree():
                events = [event async for event in self.stream(prompt)]
        else:
            events = [event async for event in self.stream(prompt)]
        return RunResult.from_events(events, await self.tree())

    async def release_main(self) -> None:
        """Give the actor held between a conversation's turns back to the pool."""
        main, self.held_main = self.held_main, None
        if main is not None and self.runtime is not None:
            self.kit.owned.remove(main)
            await self.runtime.registry.release(main)

    async def send(self, prompt: str) -> None:
        """A user message while a turn runs: the main agent reads it at its next step (or the
        next turn reads it, ``mail_waiting``), as Claude Code takes a message typed while it works."""
        if self.runtime is None:
            raise UserError("the session has not started: send the first prompt with stream()")
        await self.runtime.mailbox.put(self.main_agent_id, UserMessage(text=prompt))

    async def mail_waiting(self) -> bool:
        """Whether mail (a notice, a message) or a resumed session's deferred call waits for the main agent."""
        if self.runtime is None or self.current_main is not None:
            return False
        deferred = self.turns == 0 and self.resumed is not None and bool(pending_calls(self.resumed.history))
        return deferred or bool(await self.runtime.mailbox.pending(self.main_agent_id) > 0)

    async def background_running(self) -> bool:
        """Whether agents the main agent owns may still notify it."""
        return self.runtime is not None and bool(await self.runtime.registry.outstanding(self.main_agent_id))

    # -- control requests (the SDK's, and the notebook's) ------------------------------

    async def interrupt(self, reason: str = "interrupted by the user") -> bool:
        """Stop the current turn (Claude Code's interrupt): the main agent's run and its sync
        children end, background agents keep running; the turn's result says so. False if no turn runs."""
        if self.current_main is None:
            return False
        self.interrupting = True
        return await teardown.interrupt(self, self.current_main, reason)  # with the Interrupt hooks

    async def stop_task(self, task_id: str) -> bool:
        """Kill one agent of this session by id (``stop_task``); its owner is notified."""
        if self.runtime is None:
            return False
        return bool(await self.runtime.registry.kill_agent(task_id, "stopped by the client"))

    def set_permission_mode(self, mode: str) -> None:
        """The main agent's permission mode from the next turn on (``set_permission_mode``)."""
        check_mode(mode)
        check_allowed_mode(mode, self.settings, "set_permission_mode")
        self.policy.mode = cast(PermissionMode, mode)  # check_mode refused any other

    def set_model(self, model: str | None) -> None:
        """The main agent's model from the next turn on (``set_model``; None: the default)."""
        self.model_id = resolve_model(model or self.settings.model or DEFAULT_MODEL, env=self.env)

    # -- the session's actors -----------------------------------------------------------

    async def start(self) -> SessionRuntime:
        """Join or start Ray and start the session's actors (idempotent); a served session
        borrows ready ones from the covey service instead."""
        return await kit.start(self)

    async def stop(self, reason: str, grace_s: float = teardown.STOP_GRACE_S) -> list[dict[str, Any]]:
        """Stop every agent of this session, each with its cleanup (kept worktrees are returned)."""
        return await teardown.stop(self, reason, grace_s)

    def close(self, reason: str = "other") -> None:
        """Run the SessionEnd hooks, then end every actor this session started (and Ray if covey started it)."""
        teardown.close(self, reason)

    def live_tree(self, interval_s: float = 0.5) -> TreeDisplay:
        """A notebook display of the agent tree that updates while the block inside runs::

            async with session.live_tree():
                async for event in session.stream(prompt): ...
        """
        return TreeDisplay(self.tree, interval_s)

    async def tree(self) -> dict[str, Any]:
        """The agent tree with statuses and rolled-up usage (empty before a run)."""
        return {} if self.runtime is None else await self.runtime.registry.tree()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


def run(prompt: str, *, live: bool | None = None, **options: Any) -> RunResult:
    """Run one prompt to its end, synchronously (scripts, Ray jobs, notebooks); options as ``Session``.

    ``live``: the agent tree as a display that updates while agents work (default: in a Jupyter kernel).
    """
    shown = in_notebook() if live is None else live

    async def go() -> RunResult:
        with Session(**options) as session:
            return await session.run(prompt, live=shown)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(go())
    # Inside a running loop (Jupyter): run on a private loop in a worker thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, go()).result()
