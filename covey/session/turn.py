"""One turn of the conversation: the main agent's run on an actor from the pool, its events
as they happen (prompts answered, results given the session's spend), and its actor given
back or held for the next turn."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, TypeGuard

from covey.agent.handle import AgentHandle
from covey.errors import UserError
from covey.events import Event, PermissionPrompt, ResultEvent, TaskNotification, UserEvent
from covey.hooks.callback import HookCallbackPrompt
from covey.mcp.relay import McpMessagePrompt
from covey.runtime.records import FinalReport
from covey.runtime.spec import AgentSpec
from covey.session.callbacks import ask, hook_callback, mcp_message, with_session_spend
from covey.session.config import SessionConfig
from covey.session.kit import Kit
from covey.session.main_agent import ask_program_servers, init_event, main_spec
from covey.session.main_slot import MainAgentSlot
from covey.session.record import record_session
from covey.session.result import INTERRUPTED, failure, interrupted_reason, note_calls
from covey.session.runtime import SessionRuntime
from covey.session.watch import SessionBroken, watched
from covey.transcripts.transcript import agent_transcript


class Turn:
    """One turn of the conversation over the session's three owners: what it read (``config``),
    its main agent (``slot``) and what it started (``kit``)."""

    def __init__(self, config: SessionConfig, slot: MainAgentSlot, kit: Kit) -> None:
        self.config, self.slot, self.kit = config, slot, kit

    async def stream(self, prompt: str | None) -> AsyncIterator[Event]:
        """The turn's events (``Session.stream``): ``system/init`` first, the result last."""
        slot, kit = self.slot, self.kit
        if prompt is None and slot.turns == 0 and self.config.resumed is None:
            raise UserError("a conversation's first turn needs a prompt")
        runtime = await kit.start()
        await ask_program_servers(self.config)
        yield init_event(self.config, slot, kit.session_id)
        main, spec = await self._begin(runtime, prompt)
        shown = _Shown(self, main, spec)
        try:
            try:
                async for event in shown.events(runtime):
                    yield event
            except SessionBroken as exc:
                yield await kit.broken(exc, spec.agent_id)
                return
            except asyncio.CancelledError:
                # Interrupted (Ctrl-C, SIGTERM, a cancelled cell): every agent is stopped
                # and its cleanup runs before the session's actors go.
                await asyncio.shield(kit.stop("the run was interrupted"))
                raise
            report = main.last_report or await main.wait()
            await self._finish(runtime, main, spec, report)
            if not shown.ended:
                for event in self._unended(report, spec.agent_id, shown.calls):
                    yield event
        finally:
            # Otherwise the main actor stays until close(): teams it created live on it, and
            # an interrupted run must first cancel its sync children from inside it.
            slot.end()
            runtime.set_root(None)

    def _unended(self, report: FinalReport, agent_id: str, calls: set[str]) -> list[Event]:
        """Interrupted, or the agent failed before its loop could report (a bad hook, a blocked
        prompt, a crash): the cause travelled in its report, so the turn ends on it."""
        session_id, interrupting = self.kit.session_id, self.slot.interrupting
        ended = failure(report.model_copy(update={"text": INTERRUPTED if interrupting else report.text}),
                        session_id, agent_id)
        if not interrupting:
            return [ended]
        # As Claude Code's interrupted turn ends: a user message, then its result.
        ended.terminal_reason = interrupted_reason(calls)
        return [UserEvent(session_id=session_id, message={"role": "user", "content": [
            {"type": "text", "text": INTERRUPTED}]}), ended]

    async def _begin(self, runtime: SessionRuntime, prompt: str | None) -> tuple[AgentHandle, AgentSpec]:
        """The main agent's actor (held from the last turn, or a warm one from the pool), registered."""
        config, slot, kit = self.config, self.slot, self.kit
        main = slot.take()
        if main is None:
            main = await kit.take_main(runtime)
        slot.begin(main)
        runtime.set_root(main, kit.model)
        spec = main_spec(config, slot, prompt, runtime, session_id=kit.session_id, model=kit.model)
        output_file = str(agent_transcript(spec))
        await runtime.registry.register_main(spec.agent_id, spec.model_id, spec.cwd, prompt or "", output_file, main.node)
        record_session(config.roots, session_id=kit.session_id, main_agent_id=slot.agent_id, cwd=config.cwd,
                       model_id=slot.model_id, mode=slot.mode)
        return main, spec

    async def _finish(self, runtime: SessionRuntime, main: AgentHandle, spec: AgentSpec, report: FinalReport) -> None:
        finishing = runtime.registry.finish_main(spec.agent_id, report)
        # With teams the actor stays: they live on it. A conversation's next turn runs on the same
        # actor (no trip to the pool and back).
        if self.slot.done(main, reusable=not runtime.teams and report.status != "failed") or runtime.teams:
            await finishing
        else:
            # Its run is over and nothing lives on it: it goes back to the pool (the session's,
            # or the covey service's), warm for the next turn or run, which takes one from there
            # (the conversation is in the transcript). The pool keeps a bounded few and kills the
            # rest, and one whose reset finds leftovers: a notebook's hundredth run holds no
            # hundred idle processes.
            await asyncio.gather(finishing, self.kit.give_back(main))

class _Shown:
    """The main agent's events as the person sees them: prompts answered, not shown; a notice
    or queued message that starts its next turn announced by ``system/init``; a background
    child's messages as they come, also between the main agent's turns; a result that is not
    the run's last held until the next."""

    def __init__(self, turn: Turn, main: AgentHandle, spec: AgentSpec) -> None:
        self.config, self.slot, self.kit = turn.config, turn.slot, turn.kit
        self.main, self.spec = main, spec
        self.ended, self.in_turn = False, True
        self.noticed: str | None = None
        """The run id of the last background task that notified the main agent."""
        self.origin: dict[str, Any] | None = None
        self.relaying: set[asyncio.Task[None]] = set()
        self.held: list[Event] = []
        """Results that were not the run's last (``goes_on``): shown before the next one, as Claude Code does."""
        self.calls: set[str] = set()
        """The main agent's tool calls not yet answered (an interrupt then stops tools)."""

    async def _relay(self, prompt: McpMessagePrompt) -> None:
        await self.main.answer(prompt.request_id, await mcp_message(self.config.options.on_mcp_message, prompt))

    async def events(self, runtime: SessionRuntime) -> AsyncIterator[Event]:
        config = self.config
        async for event in watched(runtime, self.main.events(self.spec)):
            if isinstance(event, PermissionPrompt):
                await self.main.answer(event.request_id, await ask(config.asker, event, self.slot.agent_id))
            elif isinstance(event, HookCallbackPrompt):
                await self.main.answer(event.request_id, await hook_callback(config.options.on_hook_callback, event))
            elif isinstance(event, McpMessagePrompt):  # answered aside: an MCP call may take a while
                self.relaying.add(task := asyncio.create_task(self._relay(event)))
                task.add_done_callback(self.relaying.discard)
            else:
                for shown in await self._shown(runtime, event):
                    yield shown
        for held in self.held:  # the run ended without another result (its background work went quiet)
            yield held

    async def _shown(self, runtime: SessionRuntime, event: Event) -> list[Event]:
        mine = event.agent_id in (None, self.spec.agent_id)
        if mine:
            note_calls(self.calls, event)
        if isinstance(event, TaskNotification):
            self.noticed = event.run_id
        if mine and isinstance(event, ResultEvent):
            self.ended, self.in_turn = True, False
            shown = await with_session_spend(runtime.registry, event, self.origin)
            self.origin = None
            self.held.append(shown)
            if event.goes_on:
                return []
            shown_now, self.held = self.held, []
            return shown_now
        if mine and _is_turn_input(event):
            # A notice (a background child's) or a queued message starts the main agent's next
            # turn: Claude Code announces a turn with system/init and prints no user message
            # for it (the transcript keeps it).
            if self.in_turn:
                return []
            self.in_turn = True
            if self.noticed and "<task-notification>" in str(event.message.get("content")):
                self.origin = {"kind": "task-notification", "producer": "session-task", "runId": self.noticed}
            shown_now, self.held = (self.held, []) if self.slot.holds else ([], self.held)
            return [*shown_now, init_event(self.config, self.slot, self.kit.session_id)]
        return [event]


def _is_turn_input(event: Event) -> TypeGuard[UserEvent]:
    """A user message of text only: a notice or queued message the loop took, not tool results."""
    if not isinstance(event, UserEvent):
        return False
    content = event.message.get("content")
    return event.taken_mail or isinstance(content, list) and all(block.get("type") == "text" for block in content)
