"""The flags only the SDKs pass (the TypeScript SDK's ``persistSession``, ``debug``, the
``*Delivery: "initialize"`` options, ``managedSettings``, ``permissionPrompts``, ``channels``,
``plugins`` with ``skipMcpDiscovery``, ``projectConfigRoot``), and the checks that span flags.

Each either sets a run option (``option``: a ``SessionOptions`` field) or says how to read the
``initialize`` request; ``--channels`` is refused in one line (docs/sdk.md#the-typescript-sdk).
Plain Python (no pydantic): the thin client's way to a served run imports it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import threading
from typing import Any, Iterator

from covey.cli.flags import json_object_arg, option, user_path
from covey.errors import CoveyError

INITIALIZE_FIELDS = ("settings", "disallowedTools", "additionalDirectories")
"""What ``--initialize-fields`` may name: options the TypeScript SDK then sends in ``initialize``."""
AWAITED = ("plugins", "mcpServers")
"""What an ``initialize`` carries for a command line with ``--await-initialize`` (its ``pluginDelivery``
and ``mcpServersDelivery: "initialize"``)."""
TAIL_POLL_S = 0.1


def add_sdk_flags(run: argparse.ArgumentParser) -> None:
    option(run, "--no-session-persistence", field="session_persistence", action="store_false",
           help="keep the session's files in a private temporary folder removed at its end (it cannot be resumed)")
    option(run, "--debug", "-d", field="debug", action=DebugAction, nargs="?", const="", metavar="FILTER",
           help="write the session's debug log to <config>/debug/<session id>.txt (a filter is taken, not applied)")
    option(run, "--debug-file", field="debug", action=DebugAction, type=user_path, metavar="PATH",
           help="write the session's debug log to PATH")
    run.add_argument("--debug-to-stderr", action="store_true", help="the session's debug log on stderr")
    option(run, "--managed-settings", type=lambda value: json_object_arg(value, "--managed-settings"), metavar="JSON",
           help="policy-tier settings from the program that starts covey (only their restrictive keys apply)")
    option(run, "--permission-prompts", choices=("host", "none"),
           help="who answers permission prompts: host (default), or none (what would be asked is denied)")
    option(run, "--plugin-dir-no-mcp", field="plugin_dirs", action="append", type=user_path, metavar="DIR",
           help="load the plugin in DIR without its MCP servers (covey starts no plugin's)")
    option(run, "--project-config-root", type=_config_root, metavar="PATH",
           help="the checkout the working directory is a worktree of: its .claude settings and definitions apply")
    run.add_argument("--await-initialize", action="store_true",
                     help="with --input-format stream-json: the initialize request also carries plugins and MCP servers")
    run.add_argument("--initialize-fields", type=_initialize_fields, default=(), metavar="NAMES",
                     help="with --await-initialize: options the initialize request carries (settings, disallowedTools, additionalDirectories)")
    run.add_argument("--managed-settings-in-initialize", action="store_true",
                     help="with --await-initialize: the managed settings come in the initialize request")
    run.add_argument("--replay-user-messages", action="store_true",
                     help="with stream-json input and output: echo each user message back on stdout (isReplay)")
    run.add_argument("--channels", action="append", type=_no_channels, metavar="SERVERS",
                     help="refused: covey takes no MCP channel notifications")


class DebugAction(argparse.Action):
    """``--debug`` and ``--debug-file`` set one option: a file named wins over ``--debug``'s own file
    in either order (the TypeScript SDK may pass both), and ``--debug``'s filter is never a path."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        value = values if option_string == "--debug-file" else ""
        if value or not getattr(namespace, self.dest, None):
            setattr(namespace, self.dest, value)


def check_sdk_flags(args: argparse.Namespace) -> None:
    """What Claude Code refuses in one line, covey too: the ``initialize`` flags need a stream-json input."""
    stream = args.input_format == "stream-json"
    if (args.initialize_fields or args.managed_settings_in_initialize) and not (args.await_initialize and stream):
        flag = "--initialize-fields" if args.initialize_fields else "--managed-settings-in-initialize"
        raise CoveyError(f"{flag} requires --await-initialize and --input-format stream-json (as in Claude Code)")
    if args.replay_user_messages and not (stream and args.output_format == "stream-json"):
        raise CoveyError("--replay-user-messages requires both --input-format=stream-json and "
                         "--output-format=stream-json (as in Claude Code)")
    if args.await_initialize and not stream:
        raise CoveyError("--await-initialize requires --input-format stream-json: the initialize request comes on stdin")


def initialize_reads(args: argparse.Namespace) -> frozenset[str]:
    """The ``initialize`` fields this command line says to take, besides those always taken."""
    reads = set(AWAITED) if args.await_initialize else set()
    reads.update(args.initialize_fields)
    if args.managed_settings_in_initialize:
        reads.add("managedSettings")
    return frozenset(reads)


@contextlib.contextmanager
def debug_to_stderr(options: dict[str, Any], wanted: bool) -> Iterator[dict[str, Any]]:
    """``--debug-to-stderr``: the session (maybe in the covey service, always on this machine) writes
    its debug log to a file, the ``--debug-file`` given or a private temporary one, and this process
    copies what is written to its stderr as it comes. Yields the run's options."""
    if not wanted:
        yield options
        return
    given = options.get("debug")
    if given:
        path, own = given, False
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    else:
        handle, path = tempfile.mkstemp(prefix="covey-debug-", suffix=".txt")
        os.close(handle)
        own = True
    stop = threading.Event()
    tail = threading.Thread(target=_tail, args=(path, stop, os.path.getsize(path)), daemon=True)
    tail.start()
    try:
        yield {**options, "debug": path}
    finally:
        stop.set()
        tail.join()
        if own:
            with contextlib.suppress(OSError):
                os.unlink(path)


def _tail(path: str, stop: threading.Event, start: int) -> None:
    """``path``'s text from byte ``start`` to stderr until ``stop``, then what is left."""
    with open(path, encoding="utf-8", errors="replace") as log:
        log.seek(start)
        while True:
            stopping = stop.is_set()
            if text := log.read():
                sys.stderr.write(text)
                sys.stderr.flush()
            elif stopping:
                return
            else:
                stop.wait(TAIL_POLL_S)


def _initialize_fields(value: str) -> list[str]:
    names = [name for name in value.split(",") if name]
    for name in names:
        if name not in INITIALIZE_FIELDS:
            raise CoveyError(f"--initialize-fields: covey does not take {name!r} in the initialize request (it takes "
                             f"{', '.join(INITIALIZE_FIELDS)}): send the value by its flag")
    return names


def _config_root(value: str) -> str:
    """As Claude Code: an absolute path to a folder this user can list."""
    if not os.path.isabs(value):
        raise CoveyError(f"--project-config-root {value}: must be an absolute local path")
    if not os.path.isdir(value) or not os.access(value, os.R_OK | os.X_OK):
        raise CoveyError(f"--project-config-root {value}: not an existing directory that this user can list")
    return os.path.normpath(value)


def _no_channels(value: str) -> str:
    raise CoveyError(f"--channels {value}: covey takes no MCP channel notifications (a server pushing messages "
                     "into the session, Claude Code's research preview); start without channels")
