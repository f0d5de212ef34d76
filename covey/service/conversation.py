"""A claude-agent-sdk client's conversation through the covey service (``--input-format stream-json``)."""

from __future__ import annotations

import asyncio
import enum
import logging
import uuid
from typing import Any

from covey.agent.opening import CLEARED
from covey.client import ports as protocol
from covey.client.ports import ControlRequest, RunBody, RunLine, UserLine
from covey.definitions.output_style import output_styles
from covey.errors import CoveyError
from covey.events import ConversationReset, ResultEvent, SystemInit
from covey.events.forwarding import Forwarding
from covey.ids import new_session_id
from covey.loop.compacting import compact_command
from covey.service import controls
from covey.service.asker import ClientAsker, HookCaller, McpRelayClient
from covey.service.runs import ServedRun, prompt_of
from covey.service.session_options import session_for
from covey.service.session_state import SessionStates
from covey.service.stamps import TurnStamps, replayed
from covey.session import Session
from covey.settings.files import source_set

log = logging.getLogger(__name__)


class _End(enum.Enum):
    INPUT = "input"
    """In a conversation's input queue: the client's input has ended."""
    CONVERSATION = "conversation"
    """What ``_next_turn`` answers once the input has ended and nothing is left to notify."""


_END = _End.INPUT

CLEAR = "/clear"
"""Claude Code's command that starts the conversation over (``conversation_reset``)."""
CLEARED_ECHO = CLEARED[1]["content"].rstrip("\n")
"""How Claude Code echoes ``/clear`` (``--replay-user-messages``): as its record of the command."""
MAIL_POLL_S = 0.25
"""Between turns, how often a conversation looks for a notice that came for its main agent."""


class ConversationRun(ServedRun):
    """A claude-agent-sdk client's session (``--input-format stream-json``): every ``user``
    line is a turn of one conversation, control requests are answered as they come, and
    the session ends once the client's input has ended and nothing is left to notify.

    A turn runs while the next lines are read: a message that comes during a turn is
    queued for the main agent (it reads it at its next step, or a turn after this one
    does); a notice that comes between turns starts a turn of its own, as Claude Code's
    background agents do. The SDK's ``can_use_tool`` answers permission prompts
    (``--permission-prompt-tool stdio``) and its hook callbacks run on ``hook_callback``.
    """

    def __init__(self, *args: Any, service: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.service = service
        """The session borrows the covey service's actors (else: ``--no-service``, its own Ray)."""
        self.asker = ClientAsker(self.send) if self.flags.get("permission_prompt_stdio") else None
        self.hooks, self.mcp = HookCaller(self.send), McpRelayClient(self.send)
        self.inputs: asyncio.Queue[tuple[str, UserLine | None] | _End] = asyncio.Queue()
        self.stamps = TurnStamps()
        """The user messages the running (or next) turn took in: its result names them."""
        self.forwarding, self.states = Forwarding(), SessionStates(self.send)
        self.stopping: asyncio.Task[bool] | None = None
        self.replay = bool(self.flags.get("replay_user_messages"))
        self.echoes: list[UserLine] = []
        """``--replay-user-messages``: the next turn's messages, echoed after its ``system/init``."""
        self.input_ended = False
        self.opened = asyncio.Event()
        """Set once the session exists (or failed to start): a control request sent right after connecting waits for it."""
        self.initializing: list[ControlRequest] = []
        """The SDK's ``initialize`` requests come before the session opened: answered once it has
        (their output styles are the session's), before any later request."""

    async def serve(self) -> None:
        listening = asyncio.create_task(self._listen())
        self._work = asyncio.create_task(self._converse())
        try:
            await self._work
        except asyncio.CancelledError:
            if self.why_cancelled is None:
                raise
            if self.session is None:
                await self.send(await self._cancelled())
        finally:
            listening.cancel()

    async def _converse(self) -> None:
        try:
            session = await self._open_session(service=self.service, on_hook_callback=self.hooks,
                                               on_mcp_message=self.mcp)
            if session is not None:
                await self._answer_initialize(session)
        finally:
            self.opened.set()
        if session is None:
            return
        try:
            session.slot.hold()
            while not isinstance(prompt := await self._next_turn(session), _End):
                await self.states.running(session)
                if prompt is not None and prompt.strip() == CLEAR:
                    session = await self._cleared(session)
                    continue
                async for event in session.stream(prompt):
                    if isinstance(event, ResultEvent):
                        event = self.stamps.stamped(event)
                    if (shown := self.forwarding.shown(event, session.options.forward_subagent_text)) is not None:
                        await self.send(shown.wire())
                    if isinstance(event, SystemInit):  # as Claude Code: the turn's messages echo after its init
                        await self._echo(session.session_id)
            await session.release_main()
            done = protocol.done()
        except CoveyError as exc:
            await self.send(ResultEvent.failure(str(exc), session_id=session.session_id).wire())
            done = protocol.done(str(exc))
        except asyncio.CancelledError:
            done = await self._cancelled()
        finally:
            session.close()
        await self.send(done)

    async def _cleared(self, old: Session) -> Session:
        """``/clear``: the conversation starts over in a new session (Claude Code's): the old one
        ends (its agents stopped, SessionEnd with reason ``clear``), a ``conversation_reset``
        names it, the new one's first turn fires SessionStart with source ``clear``, and the
        command's own result closes this turn, in the new session."""
        await old.release_main()
        if await old.background_running():
            await old.stop("the conversation was cleared")
        old.close(reason="clear")
        body = self.request["request"]
        options = {k: v for k, v in body["options"].items()
                   if k not in ("resume", "continue_conversation", "fork_session")}
        request: RunBody = {**body, "options": {**options, "session_id": new_session_id()}}  # the new session's id
        new = self.session = await asyncio.to_thread(session_for, request, self.asker, service=self.service,
                                                     on_hook_callback=self.hooks, on_mcp_message=self.mcp,
                                                     start_source="clear")
        new.slot.hold()
        # Claude Code's new_conversation_id is opaque, not the next session id (its messages carry that).
        await self.send(ConversationReset(session_id=old.session_id, new_conversation_id=str(uuid.uuid4())).wire())
        await self._echo(new.session_id, CLEARED_ECHO)
        await self.send(self.stamps.stamped(ResultEvent(
            session_id=new.session_id, subtype="success", is_error=False, result="", num_turns=0, duration_ms=0,
            duration_api_ms=0, total_cost_usd=0.0, usage={})).wire())
        return new

    async def _echo(self, session_id: str, content: str | None = None) -> None:
        """``--replay-user-messages``: the messages the turn took, echoed (``content``: as the command's record)."""
        echoes, self.echoes = self.echoes, []
        for echo in echoes:
            await self.send(replayed(echo, session_id, content))

    async def _next_turn(self, session: Session) -> str | None | _End:
        """The next turn's prompt; None: a turn on the main agent's mail; ``_End.CONVERSATION``: it is over."""
        while True:
            if not self.inputs.empty():
                item = self.inputs.get_nowait()
                if item is not _END:
                    return self._started(item)
                continue
            if await session.mail_waiting():
                return None
            await self.states.idle_unless_busy(session)
            # The input may have ended while those Ray calls were out, with a prompt before it (still run).
            if self.input_ended and not await session.background_running() and self.inputs.empty():
                return _End.CONVERSATION
            try:
                got = await asyncio.wait_for(self.inputs.get(), MAIL_POLL_S)
            except asyncio.TimeoutError:
                continue
            if got is not _END:
                return self._started(got)

    def _started(self, item: tuple[str, UserLine | None] | _End) -> str:
        prompt, message = item if isinstance(item, tuple) else ("", None)
        if self.session is not None:  # claude-agent-sdk's verbatim_prompts: no @file is read
            self.session.slot.as_written(bool(message and message.get("client_composed")))
        if message is not None:
            self.stamps.took(message)
        if self.replay and message:
            self.echoes.append(message)
        return prompt

    def _gone(self) -> None:
        # The connection closed before the input ended (no covey_end_input): the client has gone.
        super()._gone()
        self.hooks.gone()
        self.mcp.gone()

    async def _take(self, message: RunLine) -> None:
        if message["type"] == "user":
            prompt = prompt_of(message)
            # A command waits for the turn to end; a message goes to the running main agent.
            command = prompt.strip() == CLEAR or compact_command(prompt) is not None
            if not command and self.session is not None and self.session.slot.running:
                self.stamps.took(message)
                if self.replay:
                    await self.send(replayed(message, self.session.session_id))
                await self.session.send(prompt)  # the running turn's main agent reads it
            else:
                self.inputs.put_nowait((prompt, message))
        elif message["type"] == "control_request":
            await self._control(message)
        elif message["type"] == "control_response":
            if self.asker is not None:
                self.asker.answered(message)
            self.hooks.answered(message)
            self.mcp.answered(message)
        else:  # covey_end_input
            self.input_ended = True
            for client in filter(None, (self.asker, self.hooks, self.mcp)):
                client.input_ended()  # nothing it is asked can be answered now
            self.inputs.put_nowait(_END)

    async def _failed(self, message: str, fields: dict[str, Any] | None = None) -> None:
        # The session did not start: a waiting initialize is answered first, from what it carries,
        # so the SDK reads the failure as the run's result.
        await self._answer_initialize(None)
        await super()._failed(message, fields)

    async def _answer_initialize(self, session: Session | None) -> None:
        waiting, self.initializing = self.initializing, []
        for message in waiting:
            await self.send(protocol.success(message["request_id"], self._initialized(message["request"], session)))

    def _initialized(self, request: dict[str, Any], session: Session | None) -> dict[str, Any]:
        """The answer to ``initialize``: the session's output style, the styles it could choose and its
        agent types, as Claude Code's (from the request alone if the session did not start)."""
        reads = self.flags.get("initialize_reads") or ()
        if session is None:
            return protocol.initialize_response(request, reads)
        styles, _ = output_styles(session.config_root, home=session.home,
                                  sources=source_set(session.options.setting_sources))
        agents = [{"name": name, "description": definition.description, **({"model": definition.model}
                                                                             if definition.model else {})}
                  for name, definition in session.definitions.items()]
        return protocol.initialize_response(request, reads, output_style=session.output_style.name,
                                            output_styles=list(styles), agents=agents)

    async def _control(self, message: ControlRequest) -> None:
        """A control request from the SDK: answered at once, success or an error (``controls``: what is not supported)."""
        request_id, request = message["request_id"], message["request"]
        subtype = request["subtype"]
        log.debug("control request %s (%s)", subtype, request_id)
        if subtype == "initialize" and not self.opened.is_set():
            self.initializing.append(message)  # answered once the session is open (_converse)
            return
        try:
            response = await self._answer(subtype, request)
        except CoveyError as exc:
            await self.send(protocol.error(request_id, str(exc), exc.code if isinstance(exc, controls.ControlRefused) else None))
            return
        await self.send(protocol.success(request_id, response))
        if subtype == "end_session":
            self._end_session()

    async def _answer(self, subtype: str | None, request: dict[str, Any]) -> dict[str, Any]:
        if subtype not in ("initialize", "interrupt"):
            await self.opened.wait()  # read in order: a later line waits for this one's answer
        session = self.session
        match subtype:
            case "interrupt":  # answered at once, as Claude Code does: the turn's result tells how it stopped
                if session is not None:
                    self.stopping = asyncio.create_task(session.interrupt())
                return {}
            case "initialize":
                return self._initialized(request, session)
            case "set_permission_mode" if session is not None:
                session.set_permission_mode(request.get("mode") or "default")
                return {}
            case "set_model" if session is not None:
                session.set_model(request.get("model"))
                return {}
            case "stop_task" if session is not None:
                if not await session.stop_task(request.get("task_id") or ""):
                    raise CoveyError(f"no running task {request.get('task_id')!r} in this session")
                return {}
            case "mcp_status":
                return {"mcpServers": await session.mcp_status() if session is not None else []}
            case "end_session":
                return {}
        if session is None:
            raise CoveyError(f"{subtype!r}: the session did not start")
        return await controls.answer(subtype, request, session)

    def _end_session(self) -> None:
        """``end_session``: the program is done, as if its input had ended; prompts not yet started
        are dropped (Claude Code discards its backlog), the running turn finishes."""
        while not self.inputs.empty():
            self.inputs.get_nowait()
        self.input_ended = True
        self.inputs.put_nowait(_END)
