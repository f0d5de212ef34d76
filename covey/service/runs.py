"""One served run: a client's ``covey_run`` request, its Session, and the lines back.

The run's Session comes from ``session_options.session_for``. The run streams the
session's events (``event.wire()``, what ``--output-format stream-json`` prints),
plus covey's lines for the client's stderr and live view, and ends with
``covey_done``. An ``interrupt`` from the client, the client leaving (its connection
closed) and the service stopping all cancel the run: the Session's cancellation
path stops every agent with its cleanup before the session's actors go.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable, Mapping

from covey.client import ports as protocol
from covey.client.ports import RunBody, RunLine, RunRequest, UserLine
from covey.errors import CoveyError
from covey.events import ResultEvent
from covey.events.describe import describe
from covey.observe.live import FINAL_TREE_TIMEOUT_S
from covey.service.asker import ClientAsker
from covey.service.ports import LineSink, LineSource, Unreadable
from covey.service.session_options import session_for
from covey.service.startup import failure_fields
from covey.session import Session

log = logging.getLogger(__name__)

LIVE_INTERVAL_S = 0.5


class ServedRun:
    """A run on one client connection; ``serve`` returns once the run is over."""

    def __init__(self, request: RunRequest, source: LineSource, sink: LineSink, *,
                 check: Callable[[RunBody], str | None] = lambda request: None, client_pid: int | None = None,
                 ) -> None:
        self.request, self.source, self.sink = request, source, sink
        self.request_id = request["request_id"]
        self.flags = request["request"]["run"]
        """The run's own flags (output format, live view, trace, ...); the Session's options travel apart."""
        self.check, self.client_pid = check, client_pid
        self.cwd = request["request"]["cwd"]
        self.started_at = time.time()
        self.session: Session | None = None
        # A detached run's prompts wait in its journal for a client that attaches and answers.
        self.asker = ClientAsker(self.send) if self.flags.get("can_ask") or self.flags.get("detach") else None
        self.why_cancelled: str | None = None
        """``interrupted``, ``client gone`` or ``service stopping``, once the run is cancelled."""
        self._work: asyncio.Task[None] | None = None

    async def serve(self) -> None:
        first = await self.source.next_line()
        if isinstance(first, Unreadable):  # over LINE_LIMIT, or not a user line: this run fails, the service goes on
            await self._failed(f"the prompt line could not be read: {first.why}")
            return
        prompt = prompt_of(first) if first is not None and first["type"] == "user" else ""
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

    async def send(self, message: Mapping[str, Any]) -> None:
        """Never raises: a client that cannot be written to has gone, which cancels the run."""
        if self.sink.closed():
            return
        try:
            await self.sink.put(message)
        except (ConnectionError, OSError):
            self.cancel("client gone")

    async def _open_session(self, **extra: Any) -> Session | None:
        """Build the run's Session and tell the client (its id, then its loading warnings);
        None, with the failure sent, if this service cannot serve the run or the Session fails."""
        if refused := self.check(self.request["request"]):
            await self._failed(refused)
            return None
        try:
            session = self.session = await asyncio.to_thread(session_for, self.request["request"], self.asker, **extra)
            await session.start()  # a served session takes its kit's id: the id told is the events' id
        except CoveyError as exc:
            if self.session is not None:
                self.session.close()
                self.session = None
            await self._failed(str(exc), failure_fields(exc))
            return None
        await self.send(protocol.success(self.request_id, {"session_id": session.session_id}))
        for warning in session.warnings:
            await self.send(protocol.stderr_line(f"covey: {warning}"))
        return session

    async def _run(self, prompt: str) -> None:
        if (session := await self._open_session()) is None:
            return
        try:
            await self._stream(session, prompt)
            done = protocol.done()
        except CoveyError as exc:
            await self.send(ResultEvent.failure(str(exc)).wire())
            done = protocol.done(str(exc))
        except asyncio.CancelledError:
            done = await self._cancelled()
        finally:
            session.close()
        await self.send(done)

    async def _stream(self, session: Session, prompt: str) -> None:
        verbose = self.flags.get("verbose") and self.flags.get("output_format") != "stream-json"
        live = asyncio.create_task(self._live(session)) if self.flags.get("live") else None
        try:
            async for event in session.stream(prompt):
                await self.send(event.wire())
                for line in describe(event) if verbose else ():
                    await self.send(protocol.stderr_line(line))
        finally:
            if live is not None:
                live.cancel()
                await self._final_tree(session)
        if trace := self.flags.get("trace"):
            from covey.observe.trace import write_trace

            runtime = await session.start()  # started already: its runtime, whatever the run did
            path = write_trace(trace, await runtime.registry.records())
            await self.send(protocol.stderr_line(f"covey: trace written to {path}"))

    async def _cancelled(self) -> protocol.DoneLine:
        """The run was cancelled (the Session stopped its agents): what the client is told."""
        for worktree in self.session.kept_worktrees if self.session else []:
            await self.send(protocol.stderr_line(
                f"covey: kept worktree {worktree.get('path')} (branch {worktree.get('branch')})"))
        if self.why_cancelled == "service stopping":
            await self.send(protocol.stderr_line("covey: the covey service is stopping; every agent was stopped"))
            return protocol.done("the covey service stopped during the run")
        return protocol.done(interrupted=True)

    async def _failed(self, message: str, fields: dict[str, Any] | None = None) -> None:
        """The run could not start: the error, and the failure result a script parses (``fields``:
        Claude Code's ``startup_failure_reason`` and the like)."""
        await self.send(protocol.error(self.request_id, message))
        await self.send(ResultEvent.failure(message, **(fields or {})).wire())
        await self.send(protocol.done(message))

    async def _listen(self) -> None:
        """The client's lines during the run, each to ``_take``; the connection closing means
        the client has gone (nobody answers what is still asked; the run is cancelled). A line
        that cannot be read is ignored, and the client told so in one line."""
        while (line := await self.source.next_line()) is not None:
            if isinstance(line, Unreadable):
                log.warning("a client sent a line that cannot be read (%s); ignored", line.why)
                await self.send(protocol.stderr_line(
                    f"covey: a line the service could not read was ignored: {line.why}"))
                continue
            await self._take(line)
        self._gone()
        self.cancel("client gone")

    async def _take(self, line: RunLine) -> None:
        """A print-mode run's client sends an interrupt, and answers to permission prompts."""
        if line["type"] == "control_request" and line["request"]["subtype"] == protocol.INTERRUPT:
            await self.send(protocol.success(line["request_id"]))
            self.cancel("interrupted")
        elif line["type"] == "control_response" and self.asker is not None:
            self.asker.answered(line)

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


    async def _final_tree(self, session: Session) -> None:
        """The tree once the run has ended (or was interrupted), for the client's last frame."""
        try:
            tree = await asyncio.wait_for(session.tree(), FINAL_TREE_TIMEOUT_S)
        except Exception:  # the view never stops a run
            return
        await self.send({"type": protocol.LIVE, "tree": tree})


def prompt_of(message: UserLine) -> str:
    """The prompt of a ``user`` message: a string, or its text blocks joined."""
    content = message["message"]["content"]
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content if isinstance(block, dict))
    return str(content)
