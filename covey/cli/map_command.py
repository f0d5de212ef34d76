"""``covey map TEMPLATE --input rows.jsonl --output results.jsonl``: one agent per row (docs/map.md).

The flags are ``covey -p``'s (model, tools, permission mode, agents, MCP, json schema, budget)
and the map's own. The map's driver is this process: its session borrows its registry and
agent actors from the covey service (started if none runs), or with ``--no-service`` runs on
a private Ray. Ctrl-C (or SIGTERM) stops it cleanly: the rows in flight are killed and get no
outcome, so the same command again runs them; the rows that ended are in the output.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

from covey.cli.flags import add_run_flags, session_options
from covey.common.flags import env_flag
from covey.errors import CoveyError, Interrupted

REFUSED = {"resume": "--resume", "continue_conversation": "--continue", "session_id": "--session-id",
           "fork_session": "--fork-session"}
"""Run options a map has no use for: each row is a new session of its own."""


def add_map_command(sub: Any) -> None:
    cmd = sub.add_parser("map", help="run one agent per row of a JSONL file, each row once, resumable (docs/map.md)")
    cmd.add_argument("template", metavar="TEMPLATE",
                     help='the prompt, with the row\'s fields: "Review {path} for bugs"; or an agent type\'s name')
    cmd.add_argument("--input", required=True, metavar="ROWS.jsonl", help="the rows: one JSON object a line")
    cmd.add_argument("--output", required=True, metavar="RESULTS.jsonl",
                     help="each row's outcome, a line as it ends; run again with the same output to run only the rest")
    cmd.add_argument("--retries", type=int, default=0, metavar="N", help="try a failed row N more times (default 0)")
    cmd.add_argument("--retry-failed", action="store_true", help="run again the rows the output has as failed")
    cmd.add_argument("-j", "--max-concurrent", type=int, metavar="N",
                     help="rows at once (default 8; at most the session's concurrency limit)")
    cmd.add_argument("--prompt", metavar="TEMPLATE", help="with an agent type as TEMPLATE: its prompt (default: the row as JSON)")
    add_run_flags(cmd)
    cmd.set_defaults(handler=map_command)


def map_command(args: argparse.Namespace) -> int:
    options = session_options(args)
    for field, flag in REFUSED.items():
        if options.get(field):
            raise CoveyError(f"covey map: {flag} does not apply: each row runs in a session of its own "
                             "(resume one row's session with covey -p --resume ITS_ID)")
    if args.detach or args.input_format != "text" or args.trace or args.permission_prompt_tool:
        raise CoveyError("covey map: --detach, --input-format, --trace and --permission-prompt-tool are for covey -p "
                         "(nobody answers a row's permission prompts: give its rules with --allowed-tools)")
    if args.retries < 0 or (args.max_concurrent is not None and args.max_concurrent < 1):
        raise CoveyError("covey map: --retries must be 0 or more and -j at least 1")
    if not (args.no_service or env_flag(os.environ, "COVEY_NO_SERVICE")):
        options["service"] = True
    return _run(args, options)


def _run(args: argparse.Namespace, options: dict[str, Any]) -> int:
    out = sys.stdout
    stream = args.output_format == "stream-json"
    display = display_for(args, options)
    # Ray's driver prints its warnings to stdout: during the map they go to stderr (stdout is the program's).
    with contextlib.redirect_stdout(sys.stderr):
        try:
            run = asyncio.run(_interruptible(args, options, display))
        except Interrupted as stop:
            display.stop()
            print(f"covey map: interrupted by {signal.Signals(stop.signum).name}; the rows in flight were stopped "
                  f"and have no outcome: run the same command again to run them", file=sys.stderr)
            return 128 + stop.signum
    display.summary(run.summary)
    if args.output_format == "json":
        import json

        print(json.dumps(run.summary.as_dict()), file=out)
    elif not stream:
        print(run.summary.text(), file=out)
    return 0 if all(result["status"] == "completed" for result in run.results) else 1


def display_for(args: argparse.Namespace, options: dict[str, Any]) -> Any:
    """Stream-json lines on stdout, or a bar on stderr when it is a terminal (not with --quiet, --verbose)."""
    from covey.rowmap.progress import MapDisplay

    if args.output_format == "stream-json":
        return MapDisplay(lines=sys.stdout)
    terminal = sys.stderr.isatty() and not args.quiet and not options.get("verbose")
    return MapDisplay(bar=sys.stderr if terminal else None)


async def _interruptible(args: argparse.Namespace, options: dict[str, Any], display: Any) -> Any:
    """The map; SIGINT or SIGTERM cancels it (its rows in flight killed, its session closed) and raises ``Interrupted``."""
    from covey.common.interrupts import cancelled_by_signals
    from covey.rowmap.api import map_async

    return await cancelled_by_signals(map_async(
        args.template, os.path.abspath(args.input), output=os.path.abspath(args.output), retries=args.retries,
        concurrency=args.max_concurrent, retry_failed=args.retry_failed, prompt=args.prompt, on_progress=display,
        **options))
