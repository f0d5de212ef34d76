"""``Session``: one covey run from a script, a notebook, a Ray job or the CLI.

The driver side of covey: it joins or starts Ray, starts the session's registry (with its
warm pool) and mailbox actors, runs the main agent in an ``AgentActor``, answers permission
prompts that come up from any agent, and removes everything it started when it closes. Each
job is a module of this package; ``Session`` holds the session's three state owners and its public calls.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any, AsyncIterator, cast

from covey.errors import UserError
from covey.events import Event, SystemInit
from covey.ids import AgentId
from covey.loop.steps import pending_calls
from covey.model.aliases import DEFAULT_MODEL, resolve_model
from covey.observe.notebook import TreeDisplay, in_notebook
from covey.observe.notebook_timeline import TimelineDisplay
from covey.permissions.modes import PermissionMode
from covey.runtime.records import RunRecord
from covey.runtime.spec import AgentSpec
from covey.session import main_agent
from covey.session.config import configure
from covey.session.kit import STOP_GRACE_S, Kit
from covey.session.main_slot import MainAgentSlot
from covey.session.options import SessionOptions, check_mode
from covey.session.result import RunResult
from covey.session.runtime import SessionRuntime
from covey.session.turn import Turn
from covey.session.views import SessionViews
from covey.settings.guard import check_mode as check_allowed_mode
from covey.teams.messages import UserMessage


class Session(SessionViews):
    """One covey session: ``await Session(...).run(prompt)`` or ``async for e in session.stream(prompt)``.

    Takes a ``SessionOptions`` or its fields as keywords (``Session(cwd=..., model=...)``);
    ``Session(detach=True)`` makes a ``DetachedSession``, whose run lives in the covey service.
    Its state has three owners: ``config`` (what it loaded), ``slot`` (its main agent, turn to
    turn) and ``kit`` (what it started); each public call is a line over them."""

    def __new__(cls, options: SessionOptions | None = None, /, *, detach: bool = False,
                **fields: Any) -> Any:  # a Session, or a DetachedSession (not a Session: __init__ is not run again)
        if detach:
            from covey.session.detached import DetachedSession

            return DetachedSession(options, **fields)
        return super().__new__(cls)

    def __init__(self, options: SessionOptions | None = None, /, *, detach: bool = False, **fields: Any) -> None:
        if options is not None and fields:
            raise UserError(f"Session takes SessionOptions or keywords, not both (got {sorted(fields)})")
        self.config, session_id, debug = configure(options if options is not None else SessionOptions(**fields))
        self.kit = Kit(self.config, session_id, debug)
        resumed = self.config.resumed
        self.slot = MainAgentSlot(resumed.record.main_agent_id if resumed else AgentId.new(), self.config.model_id,
                                  self.config.policy.mode)

    # -- the main agent ---------------------------------------------------------------

    def tool_names(self) -> list[str]:
        """Every tool minus those removed whole by a bare ``--disallowed-tools`` name."""
        return main_agent.tool_names(self.config)

    def _main_prompt(self) -> str:
        return main_agent.main_prompt(self.config)

    def _main_prelude(self, runtime: SessionRuntime | None) -> list[dict[str, Any]]:
        return main_agent.main_prelude(self.config, runtime)

    def main_spec(self, prompt: str | None, runtime: SessionRuntime) -> AgentSpec:
        return main_agent.main_spec(self.config, self.slot, prompt, runtime, session_id=self.kit.session_id,
                                    model=self.kit.model)

    def init_event(self) -> SystemInit:
        return main_agent.init_event(self.config, self.slot, self.kit.session_id)

    def transcript(self) -> str:
        """The main agent's transcript: what every hook payload calls ``transcript_path``."""
        return main_agent.transcript(self.config, self.kit.session_id, self.slot.agent_id)

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
        events = Turn(self.config, self.slot, self.kit).stream(prompt)
        return events if self.kit.debug is None else self.kit.debug.follow(events)

    async def run(self, prompt: str, *, live: bool | None = None) -> RunResult:
        """Run ``prompt`` to its end. ``live``: show the agent tree and the run's timeline updating
        under the running cell (default: on in a Jupyter kernel, off elsewhere)."""
        if live if live is not None else in_notebook():
            async with self.live_tree(), self.live_timeline():
                events = [event async for event in self.stream(prompt)]
        else:
            events = [event async for event in self.stream(prompt)]
        return RunResult.from_events(events, await self.tree())

    async def release_main(self) -> None:
        """Give the actor held between a conversation's turns back to the pool."""
        if (main := self.slot.release()) is not None:
            await self.kit.give_back(main)

    async def send(self, prompt: str) -> None:
        """A user message while a turn runs: the main agent reads it at its next step (or the
        next turn reads it, ``mail_waiting``), as Claude Code takes a message typed while it works."""
        if self.runtime is None:
            raise UserError("the session has not started: send the first prompt with stream()")
        await self.runtime.mailbox.put(self.slot.agent_id, UserMessage(text=prompt))

    async def mail_waiting(self) -> bool:
        """Whether mail (a notice, a message) or a resumed session's deferred call waits for the main agent."""
        if self.runtime is None or self.slot.running:
            return False
        resumed = self.config.resumed
        deferred = self.slot.turns == 0 and resumed is not None and bool(pending_calls(resumed.history))
        return deferred or bool(await self.runtime.mailbox.pending(self.slot.agent_id) > 0)

    async def background_running(self) -> bool:
        """Whether agents the main agent owns may still notify it."""
        return self.runtime is not None and bool(await self.runtime.registry.outstanding(self.slot.agent_id))

    # -- control requests (the SDK's, and the notebook's) ------------------------------

    async def interrupt(self, reason: str = "interrupted by the user") -> bool:
        """Stop the current turn (Claude Code's interrupt): the main agent's run and its sync
        children end, background agents keep running; the turn's result says so. False if no turn runs."""
        main = self.slot.interrupt()
        return main is not None and await self.kit.interrupt(main, self.slot, reason)  # with the Interrupt hooks

    async def stop_task(self, task_id: str) -> bool:
        """Kill one agent of this session by id (``stop_task``); its owner is notified."""
        if self.runtime is None:
            return False
        return bool(await self.runtime.registry.kill_agent(task_id, "stopped by the client"))

    def set_permission_mode(self, mode: str) -> None:
        """The main agent's permission mode from the next turn on (``set_permission_mode``)."""
        check_mode(mode)
        check_allowed_mode(mode, self.settings, "set_permission_mode")
        self.slot.mode = cast(PermissionMode, mode)  # check_mode refused any other

    def set_model(self, model: str | None) -> None:
        """The main agent's model from the next turn on (``set_model``; None: the default)."""
        self.slot.model_id = resolve_model(model or self.settings.model or DEFAULT_MODEL, env=self.env)

    # -- the session's actors -----------------------------------------------------------

    async def start(self) -> SessionRuntime:
        """Join or start Ray and start the session's actors (idempotent); a served session
        borrows ready ones from the covey service instead."""
        return await self.kit.start()

    async def stop(self, reason: str, grace_s: float = STOP_GRACE_S) -> list[dict[str, Any]]:
        """Stop every agent of this session, each with its cleanup (kept worktrees are returned)."""
        return await self.kit.stop(reason, grace_s)

    def close(self, reason: str = "other") -> None:
        """Run the SessionEnd hooks, then end every actor this session started (and Ray if covey started it)."""
        self.kit.close(self.slot, reason)

    def live_tree(self, interval_s: float = 0.5) -> TreeDisplay:
        """A notebook display of the agent tree that updates while the block inside runs::

            async with session.live_tree():
                async for event in session.stream(prompt): ...
        """
        return TreeDisplay(self.tree, interval_s)

    def live_timeline(self, interval_s: float = 1.0) -> TimelineDisplay:
        """A notebook display of the run's timeline (a row per agent, its model and tool time, its
        cost), drawn again every ``interval_s`` while the block inside runs; a PNG at its end."""
        return TimelineDisplay(self.records, interval_s, title=f"covey session {self.session_id[:8]}")

    async def records(self) -> list[RunRecord]:
        """The registry's record of every agent of this session (empty before a run)."""
        return [] if self.runtime is None else await self.runtime.registry.records()

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
