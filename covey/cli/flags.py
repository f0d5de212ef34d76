"""The flags of a ``covey`` run, and the run options they set.

A flag that sets a run option is added with ``option``: its long name is the
``SessionOptions`` field's (``--max-turns`` -> ``max_turns``; ``field=`` where Claude Code's
name differs), its value is converted here (a file read, a path made absolute), and when it
is not given it is absent, so the model's default holds. ``session_options`` collects them by
that name: no list of options is written here, ``covey/session/options.py`` is the list.
Plain Python (no pydantic): the thin client's way to a served run imports it.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from covey.errors import CoveyError
from covey.permissions.modes import RUN_MODES

OPTION = "option."
"""The ``dest`` prefix of a flag that sets a run option: ``option.max_turns``."""
VALUELESS = ("store_true", "store_false", "store_const")
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
THINKING_MODES = ("adaptive", "enabled", "disabled")
THINKING_DISPLAYS = ("summarized", "omitted")
"""The model layer's own lists (``covey.model.effort``, ``covey.model.thinking``; a test holds them
equal), written here because importing ``covey.model`` loads pydantic, which the thin client skips."""


def option(parser: Any, *flags: str, field: str | None = None, **kwargs: Any) -> None:
    """Add a flag that sets the ``SessionOptions`` field its long name names (or ``field``)."""
    name = field or next(flag for flag in flags if flag.startswith("--"))[2:].replace("-", "_")
    if kwargs.get("action") not in VALUELESS and "choices" not in kwargs:
        kwargs.setdefault("metavar", name.upper())
    parser.add_argument(*flags, dest=OPTION + name, default=argparse.SUPPRESS, **kwargs)


def session_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run options the command line sets, by ``SessionOptions`` field (JSON: they travel to the service)."""
    options = {dest[len(OPTION):]: value for dest, value in vars(args).items() if dest.startswith(OPTION)}
    if getattr(args, "dangerously_skip_permissions", False):  # --permission-mode wins if both are given
        options.setdefault("permission_mode", "bypassPermissions")
    return options


def add_run_flags(run: argparse.ArgumentParser) -> None:
    """Every flag of ``covey run`` / ``covey -p``: the run options, then the run's own."""
    option(run, "--model", help="alias (haiku, sonnet, opus), model id, or scripted:RULES.yaml")
    option(run, "--permission-mode", choices=RUN_MODES)
    option(run, "--max-turns", type=int)
    # Claude Code's list flags take several values (``--allowedTools Read "Bash(git *)"``) or a
    # comma-separated one, and may be repeated.
    option(run, "--allowed-tools", "--allowedTools", action=RulesAction, nargs="+", metavar="RULES")
    option(run, "--disallowed-tools", "--disallowedTools", action=RulesAction, nargs="+", metavar="RULES")
    option(run, "--cwd", help="the agent's working directory")
    prompts = run.add_mutually_exclusive_group()
    option(prompts, "--system-prompt", help="the main agent's system prompt instead of covey's (\"\" for none)")
    option(prompts, "--system-prompt-file", field="system_prompt", type=_file_text, metavar="PATH",
           help="the same, read from a file")
    option(run, "--append-system-prompt", help="text added after the main agent's system prompt")
    option(run, "--settings", type=settings_arg, metavar="JSON_OR_FILE",
           help="extra settings: a JSON object or a settings file")
    option(run, "--setting-sources", type=_sources_arg, metavar="SOURCES", help="settings files to read: user,project,local")
    option(run, "--trust", action="store_true",
           help="trust the project folder for this run: its allow rules, hooks and MCP approvals apply (covey trust)")
    option(run, "--plugin-dir", field="plugin_dirs", action="append", type=user_path, metavar="DIR",
           help="load the plugin in DIR for this session (repeatable), as claude --plugin-dir")
    option(run, "--add-dir", field="additional_directories", action="extend", nargs="+", type=os.path.abspath,
           metavar="DIR", help="other directories the file tools may use")
    option(run, "--max-budget-usd", type=float, metavar="USD", help="the session's dollar budget")
    option(run, "--fallback-model", metavar="MODEL", help="where requests go once the model is overloaded")
    option(run, "--tools", action=ToolsAction, nargs="+", metavar="LIST",
           help='the main agent\'s tools: "Read,Bash" (or Read Bash), "" for none, "default" for all')
    _add_model_flags(run)
    option(run, "--session-mirror", action="store_true",
           help="with stream-json: each session-file record as a transcript_mirror line (an SDK session_store)")
    option(run, "--include-hook-events", action="store_true",
           help="with stream-json: each hook's start and response (system hook_started / hook_response lines)")
    option(run, "--include-partial-messages", action="store_true",
           help="with stream-json: the main agent's replies as they arrive (stream_event lines)")
    option(run, "--resume", "-r", metavar="SESSION_ID", help="continue the session with this id")
    option(run, "--continue", "-c", field="continue_conversation", action="store_true",
           help="continue the most recent session in this directory")
    option(run, "--session-id", metavar="UUID", help="the new session's id")
    option(run, "--fork-session", action="store_true", help="with --resume/--continue: continue under a new id")
    option(run, "--resume-session-at", metavar="UUID", help="with --resume and --fork-session: only up to this message")
    option(run, "--resume-drops-turn", metavar="UUID", help="with --resume-session-at: the prompt of the turn it drops")
    # Files are read here: the service runs elsewhere, maybe in another directory.
    option(run, "--mcp-config", field="mcp_servers", action="append", type=mcp_config_arg, metavar="JSON_OR_FILE",
           help="MCP servers: a JSON object or a file holding one ({\"mcpServers\": {...}}); repeatable")
    option(run, "--strict-mcp-config", action="store_true", help="only the --mcp-config servers, none from config files")
    option(run, "--address", help="Ray cluster address (default: RAY_ADDRESS or a local Ray)")
    option(run, "--agents", metavar="JSON", help='extra agent definitions as JSON: {"name": {"description": ..., "prompt": ...}}')
    option(run, "--verbose", action="store_true", help="show each step on stderr, and Ray's logs")
    _add_own_flags(run)


def _add_model_flags(run: argparse.ArgumentParser) -> None:
    """What the main agent's requests ask of the model: effort, thinking, betas, a task budget,
    a schema for the final answer (docs/cli.md#thinking-effort-and-betas)."""
    option(run, "--effort", choices=EFFORT_LEVELS, help="the main agent's reasoning effort")
    option(run, "--thinking", choices=THINKING_MODES, help="extended thinking for the main agent")
    option(run, "--max-thinking-tokens", type=int, metavar="N", help="the main agent's thinking budget (0: none)")
    option(run, "--thinking-display", choices=THINKING_DISPLAYS, help="thinking returned summarized or omitted")
    option(run, "--betas", action=RulesAction, nargs="+", metavar="BETAS", help="beta headers every request carries")
    option(run, "--task-budget", type=int, metavar="TOKENS", help="the main agent's task budget (models that take one)")
    option(run, "--json-schema", type=lambda value: json_object_arg(value, "--json-schema"), metavar="JSON_OR_FILE",
           help="a JSON Schema the final answer must match: the result's structured_output")


class RulesAction(argparse.Action):
    """A list flag's values, each split at commas or spaces outside parentheses, added to what
    earlier uses of the flag gave."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        rules = list(getattr(namespace, self.dest, None) or [])
        setattr(namespace, self.dest, rules + [rule for value in values for rule in rules_arg(value)])


class ToolsAction(argparse.Action):
    """``--tools``: the names given; ``default`` for every tool (None), "" for none."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        names = [tools_arg(value) for value in values]
        setattr(namespace, self.dest, None if any(name is None for name in names)
                else [tool for listed in names if listed is not None for tool in listed])


def _add_own_flags(run: argparse.ArgumentParser) -> None:
    """The run's own flags: what is printed and how, not how the session runs."""
    run.add_argument("--dangerously-skip-permissions", action="store_true",
                     help="run in bypassPermissions mode (Claude Code's flag; --permission-mode wins if both are given)")
    run.add_argument("--allow-dangerously-skip-permissions", action="store_true",
                     help="accepted, as the TypeScript SDK passes it with bypassPermissions: covey needs no opt-in "
                          "to enter that mode (unless settings disable it)")
    # Named so that argparse does not take it for an abbreviation of --agents.
    run.add_argument("--agent", type=_no_main_agent, metavar="NAME", help="refused: covey's main agent is its own")
    run.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    run.add_argument("--input-format", choices=["text", "stream-json"], default="text",
                     help="stream-json: user messages and control requests on stdin (claude-agent-sdk's protocol)")
    run.add_argument("--permission-prompt-tool", metavar="TOOL",
                     help="who answers permission prompts: stdio (the SDK's can_use_tool over the control protocol)")
    run.add_argument("--quiet", action="store_true", help="no live agent tree on stderr")
    run.add_argument("--detach", action="store_true",
                     help="start the run on the covey service, print its session id and leave (`covey attach ID`)")
    run.add_argument("--trace", metavar="PATH", help="write a Chrome/Perfetto trace of the session to PATH")
    add_no_service_flag(run)


def add_no_service_flag(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--no-service", action="store_true",
                     help="run in this process on a private Ray, not through the covey service (COVEY_NO_SERVICE=1)")


def rules_arg(value: str) -> list[str]:
    """``--allowed-tools "Read,Bash(git status)"``: rules split at commas or spaces outside parentheses."""
    rules: list[str] = []
    depth, current = 0, ""
    for ch in value:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch in ", " and depth == 0:
            rules, current = rules + [current] if current else rules, ""
        else:
            current += ch
    return rules + [current] if current else rules


def tools_arg(value: str | None) -> list[str] | None:
    """``--tools``: None (every tool) for no flag or ``default``; else the names given ("" for none)."""
    if value is None or value.strip() == "default":
        return None
    return rules_arg(value)


def settings_arg(value: str | None) -> dict[str, Any] | None:
    """``--settings``: a JSON object, or the path of a settings file."""
    return None if value is None else json_object_arg(value, "--settings")


def mcp_config_arg(value: str) -> dict[str, Any]:
    """One ``--mcp-config``: a JSON object, or the path of a file holding one."""
    return json_object_arg(value, "--mcp-config")


def _no_main_agent(value: str) -> str:
    raise CoveyError(f"--agent {value}: covey cannot run the main thread as an agent definition (the TypeScript "
                     "SDK's `agent` option); give the definition in `agents` and let the main agent delegate to it")


def _sources_arg(value: str) -> list[str]:
    return [source for source in value.split(",") if source]


def user_path(value: str) -> str:
    return os.path.abspath(os.path.expanduser(value))


def _file_text(path: str) -> str:
    return read_text(path, "--system-prompt-file")


def json_object_arg(value: str, flag: str) -> dict[str, Any]:
    """A flag's JSON object, written inline or in the file the flag names."""
    text = value if value.lstrip().startswith("{") else read_text(os.path.expanduser(value), flag)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CoveyError(f"{flag}: not a JSON object ({exc})") from None
    if not isinstance(data, dict):
        raise CoveyError(f"{flag}: must be a JSON object, not {type(data).__name__}")
    return data


def read_text(path: str, flag: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise CoveyError(f"{flag}: cannot read {path!r}: {exc.strerror}") from None
