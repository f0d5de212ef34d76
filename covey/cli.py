"""The ``covey`` command: print mode like Claude Code's ``-p``, plus covey's own commands."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys
from typing import Any, Sequence, TextIO

from covey.errors import CoveyError
from covey.events import Event, ResultEvent, SystemInit
from covey.permissions.modes import RUN_MODES
from covey.render import describe

COMMANDS = ("run", "demo", "agents", "ps", "tree", "logs", "kill", "team")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS and ("-p" in argv or "--print" in argv):
        argv = ["run", *argv]
    args = _parser().parse_args(argv)
    if not getattr(args, "handler", None):
        _parser().print_help()
        return 2
    try:
        return args.handler(args)
    except CoveyError as exc:
        print(f"covey: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("covey: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="covey", description="Claude Code-style agents and sub-agents on Ray.")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run a prompt to its end and print the result (like claude -p)")
    run.add_argument("prompt", nargs="?", help="the task (read from stdin if omitted)")
    run.add_argument("-p", "--print", dest="print_prompt", metavar="PROMPT", help="the task, Claude Code style")
    _add_run_options(run)
    run.set_defaults(handler=_run)
    demo = sub.add_parser("demo", help="run a built-in scripted scenario (no API key needed)")
    demo.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    demo.add_argument("--address", help="Ray cluster address (default: RAY_ADDRESS or a local Ray)")
    demo.add_argument("--verbose", action="store_true")
    demo.set_defaults(handler=_demo)
    agents = sub.add_parser("agents", help="list the active agent types with source, model and tools")
    agents.add_argument("--cwd", default=".", help="the project whose agents to list")
    agents.add_argument("--agents", dest="agents_json", help="extra definitions as JSON, like claude --agents")
    agents.set_defaults(handler=_agents)
    _add_inspect_commands(sub)
    return parser


def _add_inspect_commands(sub: Any) -> None:
    specs = {
        "ps": ("running sessions and their agents", []),
        "tree": ("the agent tree of a running session", ["session?"]),
        "logs": ("show (or -f follow) an agent's transcript", ["agent_id"]),
        "kill": ("kill a running agent by id; its owner is notified", ["agent_id"]),
        "team": ("a running session's teams: roster, task board, unread messages", ["session?"]),
    }
    for name, (help_text, positionals) in specs.items():
        cmd = sub.add_parser(name, help=help_text)
        for positional in positionals:
            cmd.add_argument(positional.rstrip("?"), nargs="?" if positional.endswith("?") else None)
        if name == "logs":
            cmd.add_argument("-f", "--follow", action="store_true")
        cmd.add_argument("--address", help="the Ray cluster (default: RAY_ADDRESS, else the Rays covey started for you)")
        cmd.set_defaults(handler=_inspect)


def _add_run_options(run: argparse.ArgumentParser) -> None:
    run.add_argument("--model", help="alias (haiku, sonnet, opus), model id, or scripted:RULES.yaml")
    run.add_argument("--permission-mode", choices=RUN_MODES)
    run.add_argument("--max-turns", type=int, default=100)
    run.add_argument("--allowed-tools", "--allowedTools", action="append", default=[], metavar="RULES")
    run.add_argument("--disallowed-tools", "--disallowedTools", action="append", default=[], metavar="RULES")
    run.add_argument("--cwd", default=".", help="the agent's working directory")
    run.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    run.add_argument("--address", help="Ray cluster address (default: RAY_ADDRESS or a local Ray)")
    run.add_argument("--agents", dest="agents_json", help='extra agent definitions as JSON: {"name": {"description": ..., "prompt": ...}}')
    run.add_argument("--verbose", action="store_true", help="show each step on stderr, and Ray's logs")
    run.add_argument("--quiet", action="store_true", help="no live agent tree on stderr")
    run.add_argument("--trace", metavar="PATH", help="write a Chrome/Perfetto trace of the session to PATH")


def _rules(values: list[str]) -> list[str]:
    """``--allowed-tools "Read,Bash(git status)" Edit``: commas or spaces, outside parentheses."""
    rules, depth, current = [], 0, ""
    for ch in " ".join(values):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch in ", " and depth == 0:
            rules, current = rules + [current] if current else rules, ""
        else:
            current += ch
    return rules + [current] if current else rules


def _run(args: argparse.Namespace) -> int:
    prompt = args.print_prompt or args.prompt or (sys.stdin.read() if not sys.stdin.isatty() else "")
    if not prompt.strip():
        raise CoveyError("no prompt given: covey -p \"your task\" (or pipe it on stdin)")
    options = dict(
        cwd=args.cwd,
        model=args.model,
        permission_mode=args.permission_mode,
        max_turns=args.max_turns,
        allowed_tools=_rules(args.allowed_tools),
        disallowed_tools=_rules(args.disallowed_tools),
        address=args.address,
        verbose=args.verbose,
        agents=args.agents_json,
    )
    return _execute(prompt, options, args.output_format, args.verbose, quiet=args.quiet, trace=args.trace)


def _execute(
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
        with contextlib.redirect_stdout(sys.stderr), Session(**options) as session:
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
    if last is None:
        print("covey: the run ended without a result", file=sys.stderr)
        return 1
    if output_format == "text":
        print(last.result, file=out)
    elif output_format == "json":
        print(json.dumps(last.wire()), file=out)
    if last.is_error:
        print(f"covey: {last.subtype}: {_first_line(last.result)}", file=sys.stderr)
        return 1
    return 0


class Interrupted(Exception):
    """The run was stopped by a signal (SIGINT, SIGTERM)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


async def _interruptible(session: Any, work: Any) -> Any:
    """Start ``session``, then await ``work``; SIGINT or SIGTERM cancels it, so the session
    stops its agents (their cleanup runs) before its actors and Ray go, and raises
    ``Interrupted``. The handlers go in once Ray has started: a Ray driver installs its
    own SIGTERM handler (``sys.exit(15)``, no cleanup) in ``ray.init``."""
    await session.start()
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        task.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        return await task
    except asyncio.CancelledError:
        if received:
            raise Interrupted(received[0]) from None
        raise
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


async def _print_events(
    session: Any, prompt: str, output_format: str, verbose: bool, *, live: bool = True, trace: str | None = None,
    out: TextIO | None = None,
) -> ResultEvent | None:
    from covey.observe.live import LiveView

    last = None
    view = asyncio.create_task(LiveView(session.tree).run()) if live else None
    try:
        async for event in session.stream(prompt):
            if isinstance(event, ResultEvent):
                last = event
            if output_format == "stream-json":
                _emit(event, out or sys.stdout)
            elif verbose:
                for line in describe(event):
                    print(line, file=sys.stderr)
    finally:
        if view is not None:
            view.cancel()
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


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0]


def _demo(args: argparse.Namespace) -> int:
    from covey.demo import demo_project, demo_prompt

    with demo_project() as (project, rules):
        print(f"covey demo: a scripted main agent explores {project}", file=sys.stderr)
        options = dict(cwd=str(project), model=f"scripted:{rules}", address=args.address, verbose=args.verbose)
        return _execute(demo_prompt(), options, args.output_format, verbose=args.output_format == "text")


def _agents(args: argparse.Namespace) -> int:
    from covey.agents.loader import load_definitions
    from covey.cli_agents import list_agents_text

    print(list_agents_text(load_definitions(args.cwd, flag_agents=args.agents_json)))
    return 0


def _inspect(args: argparse.Namespace) -> int:
    from covey.observe import inspect

    match args.command:
        case "ps":
            print(inspect.ps(args.address))
        case "tree":
            print(inspect.in_session(args.address, args.session, inspect.tree_text))
        case "team":
            print(inspect.in_session(args.address, args.session, inspect.team_text))
        case "kill":
            print(inspect.with_agent(args.address, args.agent_id, inspect.kill_agent))
        case "logs":
            inspect.print_file(inspect.with_agent(args.address, args.agent_id, inspect.transcript), args.follow)
    return 0
