"""The thin client: ``covey -p`` through the covey service.

It imports the standard library and a few small covey modules, never Ray, pydantic or
covey's runtime, so a served run's first answer is not spent importing them. It sends
the run (working directory, whole environment, the run options by ``SessionOptions``
field name, the run's own flags, the prompt), prints what comes
back exactly as an in-process run prints it, answers permission prompts at the
terminal, and turns Ctrl-C / SIGTERM into an ``interrupt`` for its session only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from typing import Any, Mapping

from covey.client import process as lifecycle
from covey.client import ports as protocol
from covey.client.paths import ServicePaths, service_paths
from covey.client.ports import run_request
from covey.client.process import Connection, ServiceUnavailable
from covey.common.subprocess_env import forget_api_credentials_in_proc
from covey.common.terminal_question import converse, terminal
from covey.errors import CoveyError, UserError
from covey.observe.live import LiveView

TTY = "/dev/tty"
"""Where permission prompts are asked (tests point it at a pty)."""


class PromptTooLarge(UserError):
    """The prompt does not fit in one line of the service's protocol: the person must shorten it."""


def check_prompt(prompt: str) -> bytes:
    """The prompt's line; a prompt the service could not read is refused before a service is
    started or a byte sent."""
    encoded = protocol.encode(protocol.user_message(prompt))
    if (line := len(encoded)) > protocol.LINE_LIMIT:
        size = len(prompt.encode("utf-8", errors="surrogatepass"))
        raise PromptTooLarge(
            f"the prompt is {size:,} bytes ({line:,} as the service's JSON line); the limit is "
            f"{protocol.LINE_LIMIT:,} bytes (64 MiB) a line. Shorten it, or put the text in a file and "
            "ask the agent to Read it")
    return encoded


def run_served(prompt: str, options: dict[str, Any], output_format: str, verbose: bool, *, quiet: bool = False,
               trace: str | None = None, detach: bool = False) -> int:
    prompt_line = check_prompt(prompt)  # encoded once: the line sent
    # This process may be the service's parent, so an ancestor of the commands it runs: the key is
    # not left in its /proc environ (os.environ, a copy, keeps it for the request and the service).
    forget_api_credentials_in_proc()
    paths = service_paths()
    ensure_for_run(paths, options, output_format)
    conn = lifecycle.connect(paths, timeout_s=lifecycle.PING_TIMEOUT_S)
    if conn is None:
        raise ServiceUnavailable(f"the covey service stopped answering; its log: {paths.log}")
    conn.sock.settimeout(None)
    can_ask = sys.stdin.isatty() and output_format == "text"
    request = run_request(prompt, options, output_format=output_format, verbose=verbose,
                          live=not (quiet or verbose or detach), trace=trace, can_ask=can_ask, detach=detach)
    try:
        return ClientRun(conn, paths, output_format, detach=detach).run(request, prompt_line)
    except ServiceUnavailable as exc:
        if output_format != "text":  # a script reading JSON gets the cause in the shape it parses
            print(json.dumps(protocol.failure_result(str(exc))), flush=True)
        raise
    finally:
        conn.close()


def ensure_for_run(paths: ServicePaths, options: dict[str, Any], output_format: str = "text") -> None:
    """The service, started if none answers. A cold start says so on a terminal at once, and
    first hears what the run's own files and environment would refuse (a settings file that does
    not parse, no API key), so that no service and no Ray start for a run that cannot go."""

    def before_start() -> None:
        if sys.stderr.isatty():
            print(lifecycle.starting_line(paths, options.get("address")), file=sys.stderr, flush=True)
        from covey.service.preflight import check_or_report

        check_or_report(options, os.environ, output_format)

    lifecycle.ensure_service(paths, address=options.get("address"), before_start=before_start)


class _Leave(Exception):
    """A second signal: leave now (the service stops the session when the connection closes)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _PromptInterrupted(Exception):
    """A signal while a permission prompt waits for the person."""


class ClientRun:
    """One run's conversation with the service, and the output an in-process run would print."""

    def __init__(self, conn: Connection, paths: ServicePaths, output_format: str, *, detach: bool = False) -> None:
        self.conn, self.paths, self.output_format, self.detach = conn, paths, output_format, detach
        self.session_id: str | None = None
        """The run's session, from the service's first answer."""
        self.skip_until: str | None = None
        """``covey attach --after UUID``: events up to and including that one are not printed."""
        self.signum: int | None = None
        self.view = LiveView(None, sys.stderr)
        self._sending = self._prompting = self._interrupt_pending = False

    def run(self, request: Mapping[str, Any], prompt_line: bytes) -> int:
        previous = {signum: signal.signal(signum, self._on_signal) for signum in (signal.SIGINT, signal.SIGTERM)}
        try:
            # A service that refused the run closes the connection: what it said first is read below.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(request)
                self._send(prompt_line)
            return self._conversation()
        except _Leave as leave:
            self.view.finish()
            print(f"covey: interrupted by {signal.Signals(leave.signum).name}; the covey service stops its agents",
                  file=sys.stderr)
            return 128 + leave.signum
        finally:
            self.view.finish()  # a terminal's cursor shown again, whatever ended the run
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _conversation(self) -> int:
        last = None
        while (message := self.conn.receive()) is not None:
            kind = message.get("type")
            if kind == protocol.DONE:
                self.view.finish()  # the service sent the final tree last: it stays, above the result
                return self._finish(message, last)
            if kind == "control_request" and protocol.subtype_of(message) == protocol.CAN_USE_TOOL:
                self._asked(message)
            elif kind == protocol.STDERR:
                print(message.get("text", ""), file=sys.stderr, flush=True)
            elif kind == protocol.LIVE:
                self.view.show(message.get("tree") or {})
            elif kind == "control_response":
                if self._told_session(message) and self.detach:
                    print(self.session_id, flush=True)  # the run goes on: `covey attach ID` follows it
                    return 0
            elif self.skip_until is not None:  # an attached reader that has these lines already
                self.skip_until = None if message.get("uuid") == self.skip_until else self.skip_until
            else:
                last = message if kind == "result" else last
                if self.output_format == "stream-json":
                    print(json.dumps(message), flush=True)
        self.view.finish()
        if self.signum is not None:
            raise _Leave(self.signum)
        if self.session_id is not None:
            raise ServiceUnavailable(
                f"the covey service stopped during the run (its log: {self.paths.log}); the session goes on in "
                f"its Ray: `covey attach {self.session_id}` follows it to the end")
        raise ServiceUnavailable(f"the covey service stopped during the run; its log: {self.paths.log}. "
                                 f"The next run starts a new one")

    def _told_session(self, message: dict[str, Any]) -> bool:
        """Note the run's session id from the service's first answer; True if this was it."""
        answer = (message.get("response") or {}).get("response")
        if self.session_id is None and isinstance(answer, dict) and isinstance(answer.get("session_id"), str):
            self.session_id = answer["session_id"]
            return True
        return False

    def _finish(self, done: dict[str, Any], last: dict[str, Any] | None) -> int:
        if done.get("interrupted") and self.signum is not None:
            print(f"covey: interrupted by {signal.Signals(self.signum).name}; every agent was stopped", file=sys.stderr)
            return 128 + self.signum
        if done.get("error") and self.output_format == "text":
            raise CoveyError(done["error"])
        return print_result(last, self.output_format)

    def _asked(self, message: dict[str, Any]) -> None:
        """A permission prompt of the run: the client that owns the run answers it at once."""
        self._send(protocol.success(message["request_id"], self._permission(message["request"])))

    def _permission(self, request: dict[str, Any]) -> dict[str, Any]:
        """Ask at the terminal, as ``TerminalAsker`` does in-process."""
        suggested = request.get("suggested_rule") or request.get("tool_name", "")
        self.view.pause()  # the prompt goes below the tree's last frame; the next snapshot is drawn under it
        self._prompting = True
        try:
            with terminal(TTY) as (reading, writing):
                reply = converse(reading, writing, message=request.get("message", ""),
                                 reason=request.get("decision_reason", ""), suggested_rule=suggested,
                                 agent_id=request.get("agent_id"))
        except _PromptInterrupted:
            return {"behavior": "deny", "message": "", "interrupt": True}
        except OSError as exc:
            message = (f"No terminal to ask for permission to use {request.get('tool_name')} ({exc.strerror}), so it "
                       f"was denied. Do not retry; report that this step needs the allow rule {suggested!r}.")
            return {"behavior": "deny", "message": message}
        finally:
            self._prompting = False
        if reply == "no":
            return {"behavior": "deny", "message": ""}  # empty: "a person said no", worded by the policy
        answer = {"behavior": "allow", "updatedInput": request.get("input", {})}
        if reply == "always":
            answer["updatedPermissions"] = request.get("permission_suggestions", [])
        return answer

    def _send(self, message: Mapping[str, Any] | bytes) -> None:
        """A line (``bytes``: encoded already), never two at once (a signal may send an interrupt)."""
        self._sending = True
        try:
            if isinstance(message, bytes):
                self.conn.send_line(message)
            else:
                self.conn.send(message)
        finally:
            self._sending = False
        if self._interrupt_pending:
            self._interrupt_pending = False
            self._send_interrupt()

    def _send_interrupt(self) -> None:
        try:
            self.conn.send(protocol.control_request(protocol.INTERRUPT))
        except OSError:
            pass  # the service is gone: the conversation ends on its own

    def _on_signal(self, signum: int, _frame: Any) -> None:
        if self.signum is not None:
            raise _Leave(self.signum)
        self.signum = signum
        if self._sending:
            self._interrupt_pending = True  # never interleave two lines on the socket
        else:
            self._send_interrupt()
        if self._prompting:
            raise _PromptInterrupted()


def print_result(last: dict[str, Any] | None, output_format: str) -> int:
    """What an in-process run prints once it has its result, from the result's JSON object."""
    if last is None:
        print("covey: the run ended without a result", file=sys.stderr)
        return 1
    if output_format == "text":
        # With --json-schema the answer is the structured output: printed as JSON, one line.
        structured = last.get("structured_output")
        print(last.get("result") if structured is None else json.dumps(structured))
    elif output_format == "json":
        print(json.dumps(last))
    if last.get("is_error"):
        # An API error is Claude Code's "success" that is an error: its terminal reason names it.
        label = last.get("subtype") if last.get("subtype") != "success" else last.get("terminal_reason") or "error"
        why = (last.get("errors") or [last.get("result") or ""])[0]  # covey's words (an API error's hint too)
        print(f"covey: {label}: {_first_line(why)}", file=sys.stderr)
        return 1
    return 0


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0]
