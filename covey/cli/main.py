"""The ``covey`` command: print mode like Claude Code's ``-p``, plus covey's own commands.

A run goes through the covey service (docs/service.md) unless ``--no-service`` or ``COVEY_NO_SERVICE=1``
asks for an in-process run. On the way to a served run this module imports only the standard library and
the thin client (``covey.cli.served``): no Ray, no pydantic, none of covey's runtime."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any, Callable, Mapping, NoReturn, Sequence

from covey.cli.argv import (PIPE_CLOSED, RUN_DESCRIPTION, RUN_USAGE, VersionAction, as_command, commands_epilog,
                             prompt_of, stdout_to_devnull)
from covey.cli.flags import OPTION, add_no_service_flag, add_run_flags, session_options
from covey.cli.flags import session_options as _session_options  # noqa: F401  (the name tests call)
from covey.cli.map_command import add_map_command
from covey.cli.sdk_flags import add_sdk_flags, check_sdk_flags, debug_to_stderr, initialize_reads
from covey.cli.trace_command import add_trace_command
from covey.cli.trust import add_trust_commands
from covey.common.flags import env_flag
from covey.errors import CoveyError, Interrupted, error_line
from covey.ray.address import check_run_address

JOINS_RAY = ("run", "map", "demo", "start", "attach", "ps", "tree", "logs", "kill", "team")
"""The commands that join a Ray, or start a service that does: a Ray Client address is refused before they start."""
COMMANDS = ("run", "map", "demo", "agents", "mcp", "trust", "ps", "tree", "logs", "kill", "team", "start", "stop", "status",
            "attach", "sessions", "trace")


def main(argv: Sequence[str] | None = None) -> int:
    """The command; a reader that closed the pipe early (``covey sessions | head -3``) ends it quietly."""
    try:
        code = _command(argv)
        sys.stdout.flush()  # the last lines may still be buffered: a closed pipe shows here
        return code
    except BrokenPipeError:
        stdout_to_devnull()
        return PIPE_CLOSED


def _command(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:  # a terminal gets the help; a pipe is a prompt (`echo q | covey`)
        argv = ["--help"] if sys.stdin is None or sys.stdin.isatty() else ["run"]
    try:
        # Inside the try: a flag's value is read while parsing (a settings or MCP config file).
        args = _parser().parse_args(as_command(argv, COMMANDS))
        if args.command in JOINS_RAY:
            check_run_address(getattr(args, "address", None) or vars(args).get(OPTION + "address"), os.environ)
        return int(args.handler(args))
    except BrokenPipeError:
        raise
    except (CoveyError, OSError) as exc:  # OSError: what the machine holds (a read-only HOME, a full disk)
        print(f"covey: {error_line(exc)}", file=sys.stderr)
        return 1
    except Interrupted as stop:
        print(f"covey: interrupted by {signal.Signals(stop.signum).name}", file=sys.stderr)
        return 128 + stop.signum
    except KeyboardInterrupt:
        print("covey: interrupted", file=sys.stderr)
        return 130


class _Parser(argparse.ArgumentParser):
    """A bad command line is one line on stderr naming what was wrong (exit 2), not a usage dump:
    a program that starts covey (claude-agent-sdk) shows its user that line."""

    def error(self, message: str) -> NoReturn:
        flags = "the flags" if self.prog == "covey" else "its flags"  # a command's own parser: `covey attach`
        self.exit(2, f"covey: {message} ({self.prog} --help lists {flags})\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="covey", description="Claude Code-style agents and sub-agents on Ray.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    # `covey --help` is this parser's help: the run's flags, then the commands.
    run = sub.add_parser("run", prog="covey", usage=RUN_USAGE, description=RUN_DESCRIPTION,
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         help="run a prompt to its end and print the result (like claude -p)")
    run.add_argument("prompt", nargs="?", help="the task; a piped stdin's text is added after it (or is the task)")
    run.add_argument("-p", "--print", action="store_true",
                     help="print mode, as claude -p: a switch, the prompt is the argument (covey always prints)")
    run.add_argument("-v", "--version", action=VersionAction, help="print covey's version")
    add_run_flags(run)
    add_sdk_flags(run)
    run.set_defaults(handler=_run)
    demo = sub.add_parser("demo", help="run a built-in scripted scenario (no API key needed)")
    demo.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    demo.add_argument("--address", help="Ray cluster address (default: RAY_ADDRESS or a local Ray)")
    demo.add_argument("--verbose", action="store_true")
    add_no_service_flag(demo)
    demo.set_defaults(handler=_demo)
    agents = sub.add_parser("agents", help="list the active agent types with source, model and tools")
    agents.add_argument("--cwd", default=".", help="the project whose agents to list")
    agents.add_argument("--agents", dest="agents_json", help="extra definitions as JSON, like claude --agents")
    agents.add_argument("--plugin-dir", action="append", default=[], metavar="DIR", help="also load the plugin in DIR")
    agents.set_defaults(handler=_agents)
    add_map_command(sub)
    add_trust_commands(sub)
    add_trace_command(sub)
    _add_inspect_commands(sub)
    _add_service_commands(sub)
    run.epilog = commands_epilog(sub)
    return parser


def _add_service_commands(sub: Any) -> None:
    start = sub.add_parser("start", help="start the covey service (if none runs) and say where it is")
    start.add_argument("--address", help="the Ray cluster it serves runs on (default: RAY_ADDRESS, else a local Ray)")
    start.add_argument("--idle-timeout", type=float, metavar="S",
                       help="exit after S seconds without a run (default COVEY_IDLE_TIMEOUT_S or 600)")
    start.add_argument("--dashboard", action="store_true",
                       help="its own Ray with Ray's dashboard on 127.0.0.1: the UI, `ray job submit`, `ray list actors` "
                            "(needs ray[default]; about 170 MiB more)")
    start.set_defaults(handler=_service_command)
    stop = sub.add_parser("stop", help="stop the covey service and wait until it is gone")
    stop.set_defaults(handler=_service_command)
    status = sub.add_parser("status", help="the covey service: pid, Ray, sessions, idle time, memory and CPU")
    status.add_argument("--json", action="store_true", help="the service's answer as one JSON object")
    status.set_defaults(handler=_service_command)
    attach = sub.add_parser("attach", help="follow a session the covey service runs (or ran) to its end")
    attach.add_argument("session_id", help="the session's id, or the start of it that covey ps or sessions shows")
    attach.add_argument("--output-format", choices=["text", "json", "stream-json"],
                        help="default: the format of the run that started it")
    attach.add_argument("--after", metavar="UUID", help="print only the events after the one with this uuid")
    attach.add_argument("--verbose", action="store_true",
                        help="accepted, as with covey -p: a reader of stream-json passes it (every event is printed)")
    attach.add_argument("--permission-prompt-tool", metavar="stdio",
                        help="stdio: print the prompts the session waits on (stream-json) and read each answer, a "
                             "control_response line, from stdin")
    attach.set_defaults(handler=_service_command)
    sessions = sub.add_parser("sessions", help="this user's sessions on the covey service, running and finished")
    sessions.add_argument("--json", action="store_true", help="one JSON array")
    sessions.set_defaults(handler=_service_command)


def _add_inspect_commands(sub: Any) -> None:
    specs = {
        "ps": ("running sessions and their agents", []),
        "tree": ("the agent tree of a running session", ["session?"]),
        "logs": ("show (or -f follow) an agent's transcript", ["agent_id"]),
        "kill": ("stop a session the covey service runs, or kill a running agent by id (its owner is notified)",
                 ["agent_id"]),
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


def _run(args: argparse.Namespace) -> int:
    if args.permission_prompt_tool not in (None, "stdio") and not args.permission_prompt_tool.startswith("mcp__"):
        raise CoveyError(f"--permission-prompt-tool {args.permission_prompt_tool}: give stdio (claude-agent-sdk's "
                         "can_use_tool) or an MCP tool of the session, mcp__SERVER__TOOL")
    if args.input_format == "stream-json" and args.output_format != "stream-json":
        raise CoveyError("--input-format stream-json needs --output-format stream-json (as Claude Code does)")
    check_sdk_flags(args)
    with debug_to_stderr(session_options(args), args.debug_to_stderr) as options:
        if (tool := args.permission_prompt_tool or "").startswith("mcp__"):
            options["permission_prompt_tool"] = tool
        if args.input_format == "stream-json":
            return _converse(options, args)
        prompt = prompt_of(args.prompt)
        if not prompt.strip():
            raise CoveyError("no prompt given: covey -p \"your task\" (or pipe it on stdin)")
        return _execute(prompt, options, args, quiet=args.quiet, trace=args.trace, detach=args.detach)


def _converse(options: dict[str, Any], args: argparse.Namespace) -> int:
    """``--input-format stream-json``: a conversation over stdin/stdout (claude-agent-sdk's protocol)."""
    stdio, reads, replay = args.permission_prompt_tool == "stdio", initialize_reads(args), args.replay_user_messages
    if args.no_service or env_flag(os.environ, "COVEY_NO_SERVICE"):
        from covey.cli.local import converse

        return converse(options, stdio, reads, replay=replay)
    from covey.cli.sdk import converse_served

    options = {**options, "address": options.get("address") or os.environ.get("RAY_ADDRESS") or None}
    return converse_served(options, stdio, reads, replay=replay)


def _execute(prompt: str, options: dict[str, Any], args: argparse.Namespace, *, verbose: bool | None = None,
             quiet: bool = False, trace: str | None = None, detach: bool = False) -> int:
    """The run, through the covey service or (``--no-service``) in this process."""
    verbose = bool(options.get("verbose")) if verbose is None else verbose
    # Text and json print no sub-agent's event: none is shipped (``SessionOptions.child_events``).
    options = {**options, "child_events": args.output_format == "stream-json" or verbose}
    served, note = (False, None) if args.no_service or env_flag(os.environ, "COVEY_NO_SERVICE") else _route(options, os.environ)
    if note:
        print(note, file=sys.stderr)
    if not served:
        if detach:
            raise CoveyError("--detach needs the covey service (a run in this process ends with it): "
                             "drop --no-service / COVEY_NO_SERVICE")
        from covey.cli.local import execute
        from covey.service.preflight import check_or_report

        check_or_report({"cwd": os.getcwd(), **options}, os.environ, args.output_format)  # before Ray starts
        return execute(prompt, options, args.output_format, verbose, quiet=quiet, trace=trace)
    from covey.cli.served import run_served

    # The Ray the run names, for the service to refuse when it serves another.
    options = {**options, "address": options.get("address") or os.environ.get("RAY_ADDRESS") or None}
    return run_served(prompt, options, args.output_format, verbose, quiet=quiet, trace=trace, detach=detach)


RAY_JOB_ENV = "RAY_JOB_CONFIG_JSON_ENV_VAR"
"""Set by Ray's job supervisor in the environment of a job's driver (``ray job submit -- covey -p ...``)."""
JOB_HOW_TO = ("for warm runs, run `covey start --address auto` on the node the jobs' drivers run on "
              "before submitting")


def _route(options: dict[str, Any], env: Mapping[str, str], ping: Callable[[], dict[str, Any] | None] | None = None,
           ) -> tuple[bool, str | None]:
    """Whether the run goes through the covey service, and a line for stderr when a Ray job's
    run does not. Outside a job: always (a service is started if none answers). A job's
    driver never starts one (it would end with the job): it uses the service that answers on
    this node if that one serves the job's Ray (``RAY_ADDRESS``, which Ray sets to the job's
    GCS address), and otherwise runs in this process, as ``--no-service`` does."""
    if RAY_JOB_ENV not in env:
        return True, None
    from covey.client import process as lifecycle
    from covey.client.paths import service_paths

    answer = ping() if ping is not None else lifecycle.ping(service_paths())
    if answer is None:
        return False, (f"covey: no covey service answers on this node, and one started from a Ray job would end "
                       f"with the job: running in this driver, as --no-service does; {JOB_HOW_TO}")
    wanted = options.get("address") or env.get("RAY_ADDRESS")
    if not lifecycle.same_ray(wanted, answer):
        serves = answer.get("address") or answer.get("ray_address") or "a local Ray"
        return False, (f"covey: the covey service on this node serves Ray {serves}, not this job's {wanted}: "
                       f"running in this driver, as --no-service does; {JOB_HOW_TO} (`covey stop` first)")
    return True, None


def _service_command(args: argparse.Namespace) -> int:
    from covey.cli import service_commands as commands
    from covey.cli import sessions as sessions_client

    match args.command:
        case "start":
            return commands.start_command(args.address, args.idle_timeout, dashboard=args.dashboard)
        case "stop":
            return commands.stop_command()
        case "status":
            return commands.status_command(as_json=args.json)
        case "attach":
            return sessions_client.attach_command(args.session_id, args.output_format, args.after,
                                                  args.permission_prompt_tool)
        case "sessions":
            return sessions_client.sessions_command(as_json=args.json)
    return 2


def _demo(args: argparse.Namespace) -> int:
    from covey.cli.demo import demo_project, demo_prompt

    with demo_project() as (project, rules):
        print(f"covey demo: a scripted main agent explores {project}", file=sys.stderr)
        options = dict(cwd=str(project), model=f"scripted:{rules}", address=args.address, verbose=args.verbose)
        return _execute(demo_prompt(), options, args, verbose=args.output_format == "text")


def _agents(args: argparse.Namespace) -> int:
    from covey.cli.agents import agents_report

    plugin_dirs = [os.path.abspath(os.path.expanduser(d)) for d in args.plugin_dir]
    print(agents_report(args.cwd, args.agents_json, plugin_dirs, dict(os.environ)))
    return 0


def _inspect(args: argparse.Namespace) -> int:
    from covey.cli import inspect

    match args.command:
        case "ps":
            print(inspect.ps(args.address))
        case "tree":
            print(inspect.in_session(args.address, args.session, inspect.tree_text))
        case "team":
            print(inspect.in_session(args.address, args.session, inspect.team_text))
        case "kill":
            from covey.cli.sessions import kill_session

            if kill_session(args.agent_id) is None:  # not a session of the service's: an agent
                print(inspect.with_agent(args.address, args.agent_id, inspect.kill_agent))
        case "logs":
            from covey.observe.follow import print_file

            print_file(inspect.with_agent(args.address, args.agent_id, inspect.transcript), args.follow)
    return 0
