"""One served run: a client's ``covey_run`` request, its Session, and the lines back.

``session_for`` is the one place a served Session is built. The run streams the
session's events (``event.wire()``, what ``--output-format stream-json`` prints),
plus covey's lines for the client's stderr and live view, and ends with
``covey_done``. An ``interrupt`` from the client, the client leaving (its connection
closed) and the service stopping all cancel the run: the Session's cancellation
path stops every agent with its cleanup before the session's actors go.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any, Callable

from covey.errors import CoveyError
from covey.events import ResultEvent
from covey.render import describe
from covey.service import protocol
from covey.service.asker import ClientAsker, HookCaller
from covey.service.leftovers import INSTANCE_VAR
from covey.session import Session, SessionOptions

log = logging.getLogger(__name__)

LIVE_INTERVAL_S = 0.5


SERVICE_OWNED = frozenset({
    "cwd", "env", "asker", "on_permission", "on_hook_callback", "service", "address", "pool_size", "limits",
    "transcript_dir", "shared_fs", "model_id",
})
"""SessionOptions fields the service sets itself (the client's cwd and environment travel apart)."""
SESSION_KEYS = tuple(name for name in SessionOptions.model_fields if name not in SERVICE_OWNED)
"""The ``covey_run`` options that are the Session's (the others are the run's: output format, live view...)."""


def session_for(request: dict[str, Any], asker: Any = None, *, service: bool = True, **extra: Any) -> Session:
    """The Session of a served run, from the client's ``covey_run`` request: in the
    client's directory and environment (never the service's), on the service's ready
    session actors and shared warm pool (``service=True``)."""
    options = request.get("options") or {}
    kwargs: dict[str, Any] = {key: options[key] for key in SESSION_KEYS if options.get(key) is not None}
    kwargs.update(cwd=request["cwd"], asker=asker, env=_run_env(request.get("env") or {}), service=service, **extra)
    return Session(**kwargs)


def _run_env(client_env: dict[str, str]) -> dict[str, str]:
    """The client's environment, marked as this service's (its agents' commands carry the
    mark, so a service after this one can find them if this one dies: ``leftovers``)."""
    instance = os.environ.get(INSTANCE_VAR)
    return {**client_env, INSTANCE_VAR: instance} if instance else dict(client_env)


class ServedRun:
    """A run on one client connection; ``serve`` returns once the run is over."""

    def __init__(self, request: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 check: Callable[[dict[str, Any]], str | None] = lambda request: None, client_pid: int | None = None,
                 ) -> None:
        self.request, self.reader, self.writer = request, reader, writer
        self.request_id = request.get("request_id", "")
        self.options = request.get("request", {}).get("options") or {}
        self.check, self.client_pid = check, client_pid
        self.cwd = request.get("request", {}).get("cwd", "")
        self.started_at = time.time()
        self.session: Session | None = None
        self.asker = ClientAsker(self.send) if self.options.get("can_ask") else None
        self.why_cancelled: str | None = None
        """``interrupted``, ``client gone`` or ``service stopping``, once the run is cancelled."""
        self._work: asyncio.Task | None = None

    async def serve(self) -> None:
        try:
            first = await self.reader.readline()
            message = protocol.decode(first) if first else {}
        except ValueError as exc:  # over LINE_LIMIT, or not JSON: this run fails, the service goes on
            await self._failed(f"the prompt line could not be read: {exc} (the limit is "
                               f"{protocol.LINE_LIMIT:,} bytes a line)")
            return
        prompt = _prompt_of(message)
        listening = asyncio.create_task(self._listen())
        self._work = asyncio.create_task(self._run(prompt))
        try:
            await self._work
        except asyncio.CancelledError:
            if self.why_cancelled is None:
                raise  # this handler itself was cancelled
            if self.session is None:  # cancelled before its Session existed: no agent to stop
                await self.send(await self._cancelled())
        finally:
            listening.cancel()

    def cancel(self, why: str) -> None:
        """Stop the run (the first cause wins); the Session stops every agent."""
        if self.why_cancelled is None:
            self.why_cancelled = why
            if self._work is not None:
                self._work.cancel()

    async def send(self, message: dict[str, Any]) -> None:
        """Never raises: a client that cannot be written to has gone, which cancels the run."""
        if self.writer.is_closing():
            return
        try:
            self.writer.write(protocol.encode(message))
            await self.writer.drain()
        except (ConnectionError, OSError):
            self.cancel("client gone")

    async def _open_session(self, **extra: Any) -> bool:
        """Build the run's Session and tell the client (its id, then its loading warnings);
        False, with the failure sent, if this service cannot serve the run or the Session fails."""
        if refused := self.check(self.request.get("request", {})):
            await self._failed(refused)
            return False
        try:
            self.session = await asyncio.to_thread(session_for, self.request["request"], self.asker, **extra)
        except CoveyError as exc:
            await self._failed(str(exc))
            return False
        await self.send(protocol.success(self.request_id, {"session_id": self.session.session_id}))
        for warning in self.session.warnings:
            await self.send(protocol.stderr_line(f"covey: {warning}"))
        return True

    async def _run(self, prompt: str) -> None:
        if not await self._open_session():
            return
        try:
            await self._stream(self.session, prompt)
            done: dict[str, Any] = {"type": protocol.DONE}
        except CoveyError as exc:
            await self.send(ResultEvent.failure(str(exc)).wire())
            done = {"type": protocol.DONE, "error": str(exc)}
        except asyncio.CancelledError:
            done = await self._cancelled()
        finally:
            self.session.close()
        await self.send(done)

    async def _stream(self, session: Session, prompt: str) -> None:
        verbose = self.options.get("verbose") and self.options.get("output_format") != "stream-json"
        live = asyncio.create_task(self._live(session)) if self.options.get("live") else None
        try:
            async for event in session.stream(prompt):
                await self.send(event.wire())
                for line in describe(event) if verbose else ():
                    await self.send(protocol.stderr_line(line))
        finally:
            if live is not None:
                live.cancel()
        if trace := self.options.get("trace"):
            from covey.observe.trace import write_trace

            path = write_trace(trace, await session.runtime.registry.records())
            await self.send(protocol.stderr_line(f"covey: trace written to {path}"))

    async def _cancelled(self) -> dict[str, Any]:
        """The run was cancelled (the Session stopped its agents): what the client is told."""
        for worktree in self.session.kept_worktrees if self.session else []:
            await self.send(protocol.stderr_line(
                f"covey: kept worktree {worktree.get('path')} (branch {worktree.get('branch')})"))
        if self.why_cancelled == "service stopping":
            await self.send(protocol.stderr_line("covey: the covey service is stopping; every agent was stopped"))
            return {"type": protocol.DONE, "error": "the covey service stopped during the run"}
        return {"type": protocol.DONE, "interrupted": True}

    async def _failed(self, message: str) -> None:
        """The run could not start: the error, and the failure result a script parses."""
        await self.send(protocol.error(self.request_id, message))
        await self.send(ResultEvent.failure(message).wire())
        await self.send({"type": protocol.DONE, "error": message})

    async def _listen(self) -> None:
        """The client's lines during the run, each to ``_take``; the connection closing means
        the client has gone (nobody answers what is still asked; the run is cancelled)."""
        while True:
            try:
                if not (line := await self.reader.readline()):
                    break
                message = protocol.decode(line)
            except ValueError as exc:  # not JSON, or over LINE_LIMIT (asyncio then drops what it read)
                log.warning("a client sent a line that cannot be read (%s); ignored", exc)
                continue
            await self._take(message)
        self._gone()
        self.cancel("client gone")

    async def _take(self, message: dict[str, Any]) -> None:
        """A print-mode run's client sends an interrupt, and answers to permission prompts."""
        if protocol.subtype_of(message) == protocol.INTERRUPT:
            await self.send(protocol.success(message.get("request_id", "")))
            self.cancel("interrupted")
        elif message.get("type") == "control_response" and self.asker is not None:
            self.asker.answered(message)

    def _gone(self) -> None:
        if self.asker is not None:
            self.asker.gone()

    async def _live(self, session: Session) -> None:
        sent = None
        while True:
            await asyncio.sleep(LIVE_INTERVAL_S)
            try:
                tree = await session.tree()
            except Exception:  # the view never stops a run
                continue
            if tree != sent:
                sent = tree
                await self.send({"type": protocol.LIVE, "tree": tree})


def _prompt_of(message: dict[str, Any]) -> str:
    """The prompt of a ``user`` message: a string, or its text blocks joined."""
    content = (message.get("message") or {}).get("content", "")
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content if isinstance(block, dict))
    return str(content)


_END = object()
"""In a conversation's input queue: the client's input has ended."""

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
        self.asker = ClientAsker(self.send) if self.options.get("permission_prompt_stdio") else None
        self.hooks = HookCaller(self.send)
        self.inputs: asyncio.Queue[Any] = asyncio.Queue()
        self.input_ended = False

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
        if not await self._open_session(service=self.service, on_hook_callback=self.hooks):
            return
        try:
            self.session.hold_main = True
            while (prompt := await self._next_turn()) is not False:
                async for event in self.session.stream(prompt):
                    await self.send(event.wire())
            await self.session.release_main()
            done: dict[str, Any] = {"type": protocol.DONE}
        except CoveyError as exc:
            await self.send(ResultEvent.failure(str(exc), session_id=self.session.session_id).wire())
            done = {"type": protocol.DONE, "error": str(exc)}
        except asyncio.CancelledError:
            done = await self._cancelled()
        finally:
            self.session.close()
        await self.send(done)

    async def _next_turn(self) -> str | None | bool:
        """The next turn's prompt; None: a turn on the main agent's mail; False: the conversation is over."""
        while True:
            if not self.inputs.empty():
                prompt = self.inputs.get_nowait()
                if prompt is not _END:
                    return prompt
            if await self.session.mail_waiting():
                return None
            if self.input_ended and not await self.session.background_running():
                return False
            try:
                prompt = await asyncio.wait_for(self.inputs.get(), MAIL_POLL_S)
            except asyncio.TimeoutError:
                continue
            if prompt is not _END:
                return prompt

    def _gone(self) -> None:
        # The connection closed before the input ended (no covey_end_input): the client has gone.
        super()._gone()
        self.hooks.gone()

    async def _take(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "user":
            prompt = _prompt_of(message)
            if self.session is not None and self.session._current_main is not None:
                await self.session.send(prompt)  # the running turn's main agent reads it
            else:
                self.inputs.put_nowait(prompt)
        elif kind == "control_request":
            await self._control(message)
        elif kind == "control_response":
            if self.asker is not None:
                self.asker.answered(message)
            self.hooks.answered(message)
        elif kind == protocol.END_INPUT:
            self.input_ended = True
            self.inputs.put_nowait(_END)

    async def _control(self, message: dict[str, Any]) -> None:
        """A control request from the SDK: answered at once, success or an error naming what is not supported."""
        request_id, request = message.get("request_id", ""), message.get("request") or {}
        subtype = request.get("subtype")
        try:
            response = await self._answer(subtype, request)
        except CoveyError as exc:
            await self.send(protocol.error(request_id, str(exc)))
            return
        if response is None:
            await self.send(protocol.error(request_id, f"covey does not support the control request {subtype!r}"))
        else:
            await self.send(protocol.success(request_id, response))

    async def _answer(self, subtype: str | None, request: dict[str, Any]) -> dict[str, Any] | None:
        session = self.session
        match subtype:
            case "interrupt":
                if session is not None:
                    await session.interrupt()
                return {}
            case "initialize":
                return protocol.initialize_response(request)
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
            case "get_context_usage" | "rewind_files" | "mcp_reconnect" | "mcp_toggle":
                return None
        if session is None:
            raise CoveyError(f"{subtype!r} came before the session started")
        return None
