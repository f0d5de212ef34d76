"""The thin client of a conversation: ``covey --input-format stream-json``, as claude-agent-sdk
starts Claude Code, through the covey service.

It relays lines: the SDK's stdin lines (user messages, control requests and responses)
to the service, the service's lines (events, ``can_use_tool`` and ``hook_callback``
requests) to stdout. ``initialize`` is answered here at once, before the service is
even reached (a cold start takes seconds; the SDK waits 60 s at most), and what it
carries (the SDK's agents and hook registrations) goes to the service with the run.
Standard library only, like ``client``.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, TextIO

from covey.daemon import lifecycle, protocol
from covey.daemon.protocol import run_request
from covey.daemon.lifecycle import Connection, LineTooLong, ServiceUnavailable
from covey.daemon.paths import service_paths


def converse_served(options: dict[str, Any], permission_prompt_stdio: bool, *,
                    stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    out = Out(stdout)
    first, initialize = read_initialize(stdin, out)
    paths = service_paths()
    try:
        lifecycle.ensure_service(paths, address=options.get("address"))
        conn = lifecycle.connect(paths, timeout_s=lifecycle.PING_TIMEOUT_S)
        if conn is None:
            raise ServiceUnavailable(f"the covey service stopped answering; its log: {paths.log}")
    except ServiceUnavailable as exc:
        out.line(protocol.failure_result(str(exc)))
        print(f"covey: {exc}", file=sys.stderr)
        return 1
    conn.sock.settimeout(None)
    try:
        start_relay(conn, options, permission_prompt_stdio, first, initialize, stdin)
        return relay_output(conn, out, str(paths.log))
    finally:
        conn.close()


def start_relay(conn: Connection, options: dict[str, Any], permission_prompt_stdio: bool,
                first: dict[str, Any] | None, initialize: dict[str, Any], stdin: TextIO) -> None:
    """Send the run (with what ``initialize`` carried), then relay stdin to ``conn`` in a thread."""
    run_options = {**options, **sdk_options(initialize, options)}
    request = run_request("", run_options, output_format="stream-json", conversation=True,
                          permission_prompt_stdio=permission_prompt_stdio)
    conn.run_id = request["request_id"]
    conn.send(request)
    if first is not None:
        conn.send(first)
    threading.Thread(target=_relay_input, args=(stdin, conn), daemon=True).start()


def read_initialize(stdin: TextIO, out: "Out") -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The SDK's first line: its ``initialize`` request, answered now (the run's first line
    otherwise, sent on as it is). Returns (a line to send on, the initialize request)."""
    line = stdin.readline()
    if not line:
        return None, {}
    message = protocol.decode(line)
    if protocol.subtype_of(message) != "initialize":
        return message, {}
    request = message.get("request") or {}
    out.line(protocol.success(message.get("request_id", ""), protocol.initialize_response(request)))
    return None, request


def sdk_options(initialize: dict[str, Any], given: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Session options an ``initialize`` request carries: the SDK's agents (Claude Code's
    ``--agents`` shape) and hook registrations (``hookCallbackIds`` per matcher); and what the
    TypeScript SDK sends here, not on the command line: its in-process MCP servers
    (``sdkMcpServers``: names, added to the ``given`` command line's as the ``{"type": "sdk"}``
    servers the Python SDK's ``--mcp-config`` names), ``systemPrompt`` (parts; ``[""]`` when
    the program set none, as ``--system-prompt ""``) and ``appendSystemPrompt``."""
    options: dict[str, Any] = {}
    if initialize.get("sdkMcpServers"):
        servers = {name: {"type": "sdk", "name": name} for name in initialize["sdkMcpServers"]}
        options["mcp_servers"] = [*((given or {}).get("mcp_servers") or []), {"mcpServers": servers}]
    if isinstance(initialize.get("systemPrompt"), list):
        options["system_prompt"] = "\n\n".join(initialize["systemPrompt"])
    if isinstance(initialize.get("appendSystemPrompt"), str):
        options["append_system_prompt"] = initialize["appendSystemPrompt"]
    if initialize.get("agents"):
        options["agents"] = json.dumps(initialize["agents"])
    if initialize.get("hooks"):
        options["sdk_hooks"] = initialize["hooks"]
    if initialize:  # a program: sub-agents' text only if it asked (claude-agent-sdk's forward_subagent_text)
        options["forward_subagent_text"] = bool(initialize.get("forwardSubagentText"))
    return options


def _relay_input(stdin: TextIO, conn: Connection) -> None:
    """The SDK's lines to the service; its stdin closing ends the conversation's input."""
    try:
        for line in stdin:
            if line.strip():
                conn.send(protocol.decode(line))
        conn.send({"type": protocol.END_INPUT})
    except (OSError, protocol.ProtocolError, LineTooLong) as exc:
        print(f"covey: {exc}", file=sys.stderr)
        try:
            conn.send({"type": protocol.END_INPUT})
        except OSError:
            pass


def relay_output(conn: Connection, out: "Out", log: str) -> int:
    """The service's lines to stdout until the run is done; the exit code."""
    run_id = conn.run_id
    last: dict[str, Any] | None = None
    while (message := conn.receive()) is not None:
        kind = message.get("type")
        if kind == protocol.DONE:
            if message.get("error"):
                print(f"covey: {message['error']}", file=sys.stderr)
                return 1
            return 1 if last is not None and last.get("is_error") else 0
        if kind == protocol.STDERR:
            print(message.get("text", ""), file=sys.stderr, flush=True)
        elif kind == protocol.LIVE:
            continue
        elif kind == "control_response" and (message.get("response") or {}).get("request_id") == run_id:
            continue  # the service took the run: the SDK asked nothing
        else:
            last = message if kind == "result" else last
            out.line(message)
    out.line(protocol.failure_result(f"the covey service stopped during the run; its log: {log}"))
    return 1


class Out:
    """stdout, one JSON object per line, from any thread."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.lock = stream, threading.Lock()

    def line(self, message: dict[str, Any]) -> None:
        with self.lock:
            self.stream.write(json.dumps(message) + "\n")
            self.stream.flush()
