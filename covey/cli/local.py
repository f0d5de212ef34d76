"""An in-process run of the ``covey`` command (``--no-service``, ``COVEY_NO_SERVICE=1``):
a private Ray for this run, started and stopped here, as before the covey service."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from typing import Any, TextIO

from covey.cli.served import print_result
from covey.common.interrupts import cancelled_by_signals
from covey.errors import CoveyError, Interrupted
from covey.events import Event, ResultEvent
from covey.events.describe import describe
from covey.ray.start import sigterm_raises


def execute(
    prompt: str, options: dict[str, Any], output_format: str, verbose: bool, *, quiet: bool = False,
    trace: str | None = None,
) -> int:
    from covey.permissions.askers import TerminalAsker
    from covey.session import Session

    if sys.stdin.isatty() and output_format == "text":
        options["asker"] = TerminalAsker()
    out = sys.stdout
    # stdout carries covey's output only: Ray's driver prints its cluster warnings
    # ("N PYTHON worker processes have been started...") to sys.stdout, which would
    # break the JSON a script reads; during the run they go to stderr.
    _warnings_to_stderr()
    try:
        # SIGTERM raises Interrupted until the run's own handlers are in, and after they are out.
        with sigterm_raises(), contextlib.redirect_stdout(sys.stderr), Session(**options) as session:
            try:
                last = asyncio.run(_interruptible(session, _print_events(
                    session, prompt, output_format, verbose, live=not (quiet or verbose), trace=trace, out=out)))
            except Interrupted as stop:
                for worktree in session.kept_worktrees:
                    print(f"covey: kept worktree {worktree.get('path')} (branch {worktree.get('branch')})",
                          file=sys.stderr)
                print(f"covey: interrupted by {signal.Signals(stop.signum).name}; every agent was stopped",
                      file=sys.stderr)
                return 128 + stop.signum
    except CoveyError as exc:
        if output_format == "text":
            raise
        # A script reading JSON gets the cause in the shape it parses, not only on stderr.
        last = ResultEvent.failure(str(exc))
        if output_format == "stream-json":
            _emit(last, out)
    return print_result(last.wire() if last is not None else None, output_format)


def converse(options: dict[str, Any], permission_prompt_stdio: bool, reads: frozenset[str] = frozenset(), *,
             replay: bool = False) -> int:
    """``--input-format stream-json --no-service``: the conversation a covey service would
    serve, served here on a private Ray. The same code both ways: this thread serves one
    end of a socket pair as the service serves its socket; threads relay stdio to the other."""
    import socket
    import threading

    from covey.cli.sdk import Out, read_initialize, relay_output, start_relay
    from covey.client.process import Connection

    out = Out(sys.stdout)
    first, initialize = read_initialize(sys.stdin)
    served_end, client_end = socket.socketpair()
    conn = Connection(client_end)
    start_relay(conn, options, permission_prompt_stdio, first, initialize, sys.stdin, reads, replay=replay)
    code: list[int] = []
    relay = threading.Thread(target=lambda: code.append(relay_output(conn, out, "stderr")), daemon=True)
    relay.start()
    _warnings_to_stderr()
    with sigterm_raises(), contextlib.redirect_stdout(sys.stderr):
        asyncio.run(_serve_conversation(served_end))
    served_end.close()
    relay.join()
    return code[0] if code else 1


async def _serve_conversation(sock: Any) -> None:
    from covey.client import ports as protocol
    from covey.service.conversation import ConversationRun
    from covey.service.ports import StreamSink, StreamSource, read_control, read_run

    reader, writer = await asyncio.open_unix_connection(sock=sock, limit=protocol.LINE_LIMIT)
    request = read_run(read_control(protocol.decode(await reader.readline())))
    try:
        await ConversationRun(request, StreamSource(reader), StreamSink(writer), service=False).serve()
    finally:
        writer.close()


async def _interruptible(session: Any, work: Any) -> Any:
    """Start ``session``, then await ``work``; SIGINT or SIGTERM cancels it, so the session
    stops its agents (their cleanup runs) before its actors and Ray go, and raises
    ``Interrupted``. The handlers go in once Ray has started: a signal while it starts ends
    the start as soon as ``ray.init`` returns, leaving no Ray, and a second one at once
    (``covey.ray.start.interruptible``)."""
    try:
        await session.start()
    except BaseException:
        work.close()  # never started: no "coroutine was never awaited" warning under the run's one line
        raise
    return await cancelled_by_signals(work)


async def _print_events(
    session: Any, prompt: str, output_format: str, verbose: bool, *, live: bool = True, trace: str | None = None,
    out: TextIO | None = None,
) -> ResultEvent | None:
    from covey.observe.live import LiveView

    last = None
    # When the stream ends (or is cancelled) the view draws the final tree and leaves it on the screen.
    async with LiveView(session.tree) if live else contextlib.nullcontext():
        async for event in session.stream(prompt):
            if isinstance(event, ResultEvent):
                last = event
            if output_format == "stream-json":
                _emit(event, out or sys.stdout)
            elif verbose:
                for line in describe(event):
                    print(line, file=sys.stderr)
    if trace and session.runtime is not None:
        from covey.observe.trace import write_trace

        path = write_trace(trace, await session.runtime.registry.records())
        print(f"covey: trace written to {path}", file=sys.stderr)
    return last


class _StderrHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        print(f"covey: {record.getMessage()}", file=sys.stderr)  # sys.stderr as it is now (tests swap it)


def _warnings_to_stderr() -> None:
    """covey's warnings in this process (hooks it skipped, definitions that failed to load) go to stderr."""
    logger = logging.getLogger("covey")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler(logging.WARNING))


def _emit(event: Event, out: TextIO) -> None:
    print(json.dumps(event.wire()), file=out, flush=True)
