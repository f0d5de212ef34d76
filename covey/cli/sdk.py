"""The thin client of a conversation: ``covey --input-format stream-json``, as claude-agent-sdk
starts Claude Code, through the covey service.

It relays lines: the SDK's stdin lines (user messages, control requests and responses)
to the service, the service's lines (events, ``can_use_tool`` and ``hook_callback``
requests) to stdout. The SDK's first line, ``initialize``, is read here before the service
is reached: what it carries (the SDK's agents, hook registrations, ...) goes to the service
with the run, and the initialize itself follows as the run's first line, answered by the run
once its session is open (with the session's output styles; the SDK waits 60 s at most).
Standard library only, like ``served``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, Mapping, TextIO

from covey.cli.flags import rules_arg, user_path
from covey.client import process as lifecycle
from covey.client import ports as protocol
from covey.client.paths import service_paths
from covey.client.ports import run_request
from covey.client.process import Connection, LineTooLong, ServiceUnavailable
from covey.errors import CoveyError


def converse_served(options: dict[str, Any], permission_prompt_stdio: bool, reads: frozenset[str] = frozenset(), *,
                    replay: bool = False, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    out = Out(stdout)
    first, initialize = read_initialize(stdin)
    paths = service_paths()
    try:
        lifecycle.ensure_service(paths, address=options.get("address"))
        conn = lifecycle.connect(paths, timeout_s=lifecycle.PING_TIMEOUT_S)
        if conn is None:
            raise ServiceUnavailable(f"the covey service stopped answering; its log: {paths.log}")
    except ServiceUnavailable as exc:
        if first is not None and protocol.subtype_of(first) == "initialize":  # answered, so the SDK reads the failure
            out.line(protocol.success(first.get("request_id", ""), protocol.initialize_response(initialize, reads)))
        out.line(protocol.failure_result(str(exc)))
        print(f"covey: {exc}", file=sys.stderr)
        return 1
    conn.sock.settimeout(None)
    try:
        start_relay(conn, options, permission_prompt_stdio, first, initialize, stdin, reads, replay=replay)
        return relay_output(conn, out, str(paths.log))
    finally:
        conn.close()


def start_relay(conn: Connection, options: dict[str, Any], permission_prompt_stdio: bool,
                first: dict[str, Any] | None, initialize: dict[str, Any], stdin: TextIO,
                reads: frozenset[str] = frozenset(), *, replay: bool = False) -> None:
    """Send the run (with what ``initialize`` carried), its first line (the initialize itself, which
    the run answers once its session is open), then relay stdin to ``conn`` in a thread. ``replay``:
    ``--replay-user-messages``, the run echoes each user message back."""
    run_options = {**options, **sdk_options(initialize, options, reads)}
    request = run_request("", run_options, output_format="stream-json", conversation=True,
                          permission_prompt_stdio=permission_prompt_stdio, initialize_reads=sorted(reads),
                          replay_user_messages=replay)
    conn.run_id = request["request_id"]
    conn.send(request)
    if first is not None:
        conn.send(first)
    threading.Thread(target=_relay_input, args=(stdin, conn), daemon=True).start()


def read_initialize(stdin: TextIO) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The SDK's first line, to send on as the run's first: its ``initialize`` request (the run
    answers it) or any other line. Returns (that line, the initialize request or {})."""
    line = stdin.readline()
    if not line:
        return None, {}
    message = protocol.decode(line)
    if protocol.subtype_of(message) != "initialize":
        return message, {}
    return message, message.get("request") or {}


def sdk_options(initialize: dict[str, Any], given: dict[str, Any] | None = None,
                reads: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The Session options an ``initialize`` request carries: the SDK's agents (Claude Code's
    ``--agents`` shape) and hook registrations (``hookCallbackIds`` per matcher); and what the
    TypeScript SDK sends here, not on the command line: its in-process MCP servers
    (``sdkMcpServers``: names, added to the ``given`` command line's as the ``{"type": "sdk"}``
    servers the Python SDK's ``--mcp-config`` names), ``systemPrompt`` (parts; ``[""]`` when
    the program set none, as ``--system-prompt ""``) and ``appendSystemPrompt``; and the fields
    ``reads`` names (the command line's ``--await-initialize``, ``--initialize-fields``,
    ``--managed-settings-in-initialize``), each taken as its flag would be."""
    given = given or {}
    options: dict[str, Any] = {**_servers(initialize, given, reads), **_delivered(initialize, given, reads)}
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
    if isinstance(initialize.get("agentProgressSummaries"), bool):  # the TypeScript SDK's option
        options["agent_progress_summaries"] = initialize["agentProgressSummaries"]
    return options


def _servers(initialize: dict[str, Any], given: dict[str, Any], reads: frozenset[str]) -> dict[str, Any]:
    """``mcp_servers``: the command line's, the SDK's in-process ones, and (``mcpServersDelivery:
    "initialize"``) the servers the SDK would have put in ``--mcp-config``."""
    added = []
    if initialize.get("sdkMcpServers"):
        added.append({"mcpServers": {name: {"type": "sdk", "name": name} for name in initialize["sdkMcpServers"]}})
    if "mcpServers" in reads and isinstance(initialize.get("mcpServers"), dict) and initialize["mcpServers"]:
        added.append({"mcpServers": initialize["mcpServers"]})
    return {"mcp_servers": [*(given.get("mcp_servers") or []), *added]} if added else {}


def _delivered(initialize: dict[str, Any], given: dict[str, Any], reads: frozenset[str]) -> dict[str, Any]:
    """The options the TypeScript SDK sends in ``initialize`` instead of their flags."""
    options: dict[str, Any] = {}
    if "settings" in reads and isinstance(initialize.get("settings"), dict):
        options["settings"] = {**(given.get("settings") or {}), **initialize["settings"]}
    if "disallowedTools" in reads and isinstance(initialize.get("disallowedTools"), list):
        rules = [rule for value in initialize["disallowedTools"] for rule in rules_arg(str(value))]
        options["disallowed_tools"] = [*(given.get("disallowed_tools") or []), *rules]
    if "additionalDirectories" in reads and isinstance(initialize.get("additionalDirectories"), list):
        # As Claude Code: strings only, each as --add-dir would take it; a folder that does not exist is passed over.
        found = [os.path.abspath(d) for d in initialize["additionalDirectories"] if isinstance(d, str) and os.path.isdir(d)]
        options["additional_directories"] = [*(given.get("additional_directories") or []), *found]
    if "managedSettings" in reads and isinstance(initialize.get("managedSettings"), dict):
        options["managed_settings"] = initialize["managedSettings"]
    if "plugins" in reads and isinstance(initialize.get("plugins"), list) and initialize["plugins"]:
        options["plugin_dirs"] = [*(given.get("plugin_dirs") or []), *map(_plugin_dir, initialize["plugins"])]
    return options


def _plugin_dir(plugin: Any) -> str:
    """One of the SDK's ``plugins`` (``{"type": "local", "path": ...}``, ``skipMcpDiscovery`` or not:
    covey starts no plugin's MCP servers)."""
    if not isinstance(plugin, dict) or plugin.get("type") != "local" or not isinstance(plugin.get("path"), str):
        raise CoveyError(f"initialize: plugins: {plugin!r}: covey loads local plugins ({{\"type\": \"local\", "
                         "\"path\": ...}}) only")
    return user_path(plugin["path"])


def _relay_input(stdin: TextIO, conn: Connection) -> None:
    """The SDK's lines to the service, each sent as the SDK wrote it once it is seen to be one JSON
    object (the service reads it); its stdin closing ends the conversation's input."""
    try:
        for line in stdin:
            if text := line.strip():
                message = protocol.decode(text)
                line_bytes = f"{text}\n".encode("utf-8", "surrogateescape")  # the bytes the SDK wrote
                conn.send_line(line_bytes, protocol.subtype_of(message) or str(message.get("type")))
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

    def line(self, message: Mapping[str, Any]) -> None:
        with self.lock:
            self.stream.write(json.dumps(message) + "\n")
            self.stream.flush()
