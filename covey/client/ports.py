"""The lines the covey service and its clients exchange: newline-delimited JSON, both ways.

The shapes are Claude Code's stream-json and control protocol (what claude-agent-sdk
speaks): ``user`` messages in, the events of ``--output-format stream-json`` out,
``control_request`` / ``control_response`` both ways. covey's own lines carry a
``covey_`` type. Each line covey defines is a ``TypedDict`` here, and ``ClientLine`` is their
union; the events are ``covey.events``' (``event.wire()``). docs/service.md lists every line.
Standard library only: the thin client imports it.
"""

from __future__ import annotations

import itertools
import json
import os
import uuid
from datetime import datetime, timezone
from typing import Any, Iterable, Literal, Mapping, Required, TypedDict, Union, Unpack

from covey.common.versions import CLAUDE_CODE_VERSION

RUN, PING, STATUS, STOP, INTERRUPT, CAN_USE_TOOL = (
    "covey_run", "covey_ping", "covey_status", "covey_stop", "interrupt", "can_use_tool")
ATTACH, SESSIONS, KILL_SESSION = "covey_attach", "covey_sessions", "covey_kill_session"
"""Follow a session's run from its first line; list this user's sessions; stop one."""
STDERR = "covey_stderr"
"""A line the client prints on its stderr as is (warnings, a kept worktree, a trace written)."""
LIVE = "covey_live"
"""A snapshot of the agent tree, for the client's live view."""
DONE = "covey_done"
"""The run is over: the last line of a run's connection."""
END_INPUT = "covey_end_input"
"""A conversation's client has no more input (its stdin closed): finish, then end."""
HOOK_CALLBACK = "hook_callback"
MCP_MESSAGE = "mcp_message"
"""A JSON-RPC message for one of the program's SDK MCP servers (claude-agent-sdk's control request)."""

LINE_LIMIT = 64 * 1024 * 1024
"""Bytes per line, both ways: a prompt, or a client's whole environment, can be long. The
service reads no longer line (it refuses one, and goes on serving); a client checks its
lines first, so a too-long prompt gets a clear error before anything is sent."""

_ids = itertools.count(1)


class UserContent(TypedDict, total=False):
    role: str
    content: Required[str | list[Any]]
    """The prompt: a string, or content blocks (their text blocks are the prompt)."""


class UserLine(TypedDict, total=False):
    """A prompt: print mode's one turn, a conversation's next turn or a message to its running turn.
    An SDK's own fields (``priority``, ...) may come with it and are kept."""
    type: Required[Literal["user"]]
    message: Required[UserContent]
    uuid: str
    origin: dict[str, Any]
    client_composed: bool
    """claude-agent-sdk's verbatim prompt: no ``@file`` in it is read."""


class ControlRequest(TypedDict):
    """A request either way: the client's (``interrupt``, ``initialize``, ``covey_ping``, ...) or the
    service's (``can_use_tool``, ``hook_callback``, ``mcp_message``); ``request`` holds ``subtype``."""
    type: Literal["control_request"]
    request_id: str
    request: dict[str, Any]


class RunFlags(TypedDict, total=False):
    """A run's own flags, apart from its Session's options."""
    output_format: str
    verbose: bool
    live: bool
    trace: str | None
    can_ask: bool
    detach: bool
    conversation: bool
    permission_prompt_stdio: bool
    initialize_reads: list[str]
    replay_user_messages: bool


class RunBody(TypedDict):
    subtype: Literal["covey_run"]
    cwd: str
    env: dict[str, str]
    options: dict[str, Any]
    """``SessionOptions`` fields by name, as JSON; the service validates them."""
    run: RunFlags


class RunRequest(TypedDict):
    """``covey_run``: a connection's first line that starts a run (its prompt comes next)."""
    type: Literal["control_request"]
    request_id: str
    request: RunBody


class ResponseBody(TypedDict, total=False):
    subtype: Required[Literal["success", "error"]]
    request_id: Required[str]
    response: dict[str, Any]
    error: str
    error_code: str


class ControlResponse(TypedDict):
    type: Literal["control_response"]
    response: ResponseBody


class EndInput(TypedDict):
    type: Literal["covey_end_input"]


class StderrLine(TypedDict):
    type: Literal["covey_stderr"]
    text: str


class LiveLine(TypedDict):
    type: Literal["covey_live"]
    tree: dict[str, Any]


class DoneLine(TypedDict, total=False):
    type: Required[Literal["covey_done"]]
    error: str
    interrupted: bool


RunLine = Union[UserLine, ControlRequest, ControlResponse, EndInput]
"""What a run's client sends after its ``covey_run``."""
ClientLine = Union[RunRequest, RunLine, StderrLine, LiveLine, DoneLine]
"""Every line of a client's connection whose shape covey defines; the rest are events."""


class ProtocolError(ValueError):
    """A line that is not one JSON object, or not the line it should be."""


def encode(message: Mapping[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def decode(line: bytes | str) -> dict[str, Any]:
    """One JSON object (a line from the service: an event or a ``ClientLine``)."""
    try:
        message = json.loads(line)
    except ValueError as exc:
        raise ProtocolError(f"not JSON: {line[:200]!r}") from exc
    if not isinstance(message, dict):
        raise ProtocolError(f"not a JSON object: {line[:200]!r}")
    return message


def new_request_id() -> str:
    return f"req_{next(_ids)}_{os.urandom(4).hex()}"


def control_request(subtype: str, request_id: str | None = None, **fields: Any) -> ControlRequest:
    return {"type": "control_request", "request_id": request_id or new_request_id(),
            "request": {"subtype": subtype, **fields}}


def success(request_id: str, response: dict[str, Any] | None = None) -> ControlResponse:
    return {"type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response or {}}}


def error(request_id: str, message: str, code: str | None = None) -> ControlResponse:
    """An error answer; ``code``: Claude Code's ``error_code`` (``unsupported_request``), where it sends one."""
    body: ResponseBody = {"subtype": "error", "request_id": request_id, "error": message}
    if code:
        body["error_code"] = code
    return {"type": "control_response", "response": body}


APPLIED = {"settings": "settings_applied", "disallowedTools": "disallowed_tools_applied",
           "managedSettings": "managed_settings_applied", "mcpServers": "mcp_servers_applied",
           "plugins": "plugins_applied", "additionalDirectories": "additional_directories_applied"}
"""The ``initialize`` fields the command line may tell covey to take, and the answer's flag saying
it did (the TypeScript SDK ends a session whose answer does not confirm what it sent)."""


def initialize_response(request: dict[str, Any], reads: Iterable[str] = (), *, output_style: str = "default",
                        output_styles: Iterable[str] = ("default",),
                        agents: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """What covey answers claude-agent-sdk's ``initialize``: the session's output style and the
    styles it could choose, its agent types (else the ones the request carries), the hooks applied
    (``hooks_applied``), and which of the fields ``reads`` names were taken; covey has no slash commands,
    speaks Claude Code ``CLAUDE_CODE_VERSION`` and sandboxes no command (``sandbox_enabled``: false)."""
    taken = set(reads)
    if agents is None:
        agents = [{"name": name, "description": (spec or {}).get("description", "")}
                  for name, spec in (request.get("agents") or {}).items()]
    return {
        "commands": [], "agents": agents, "output_style": output_style, "available_output_styles": list(output_styles),
        "models": [], "account": {}, "claude_code_version": CLAUDE_CODE_VERSION, "sandbox_enabled": False,
        "hooks_applied": True, "hook_on_failure_supported": False,
        **{flag: field in taken for field, flag in APPLIED.items()},
    }


def refusal(request_id: str, message: str) -> list[Mapping[str, Any]]:
    """A run the service will not start: the error, the failure result a script parses, the end."""
    return [error(request_id, message), failure_result(message), done(message)]


def user_message(prompt: str) -> UserLine:
    return {"type": "user", "message": {"role": "user", "content": prompt}}


def stderr_line(text: str) -> StderrLine:
    return {"type": "covey_stderr", "text": text}


def done(error: str | None = None, *, interrupted: bool = False) -> DoneLine:
    """``covey_done``: the run is over (``error``: it failed before its result said so)."""
    line: DoneLine = {"type": "covey_done"}
    if error is not None:
        line["error"] = error
    if interrupted:
        line["interrupted"] = True
    return line


def subtype_of(message: Mapping[str, Any]) -> str | None:
    """The subtype of a ``control_request``, else None."""
    if message.get("type") != "control_request":
        return None
    request = message.get("request")
    return request.get("subtype") if isinstance(request, dict) else None


def failure_result(text: str) -> dict[str, Any]:
    """The ``result`` line of a run that failed before it had one (``ResultEvent.failure``'s
    shape, written here so that the thin client needs no pydantic): what a script reading
    ``json`` or ``stream-json`` parses when the service died mid-run."""
    usage = {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0,
             "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": "standard",
             "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0}, "iterations": [],
             "speed": "standard", "fallback_credit": None}
    return {"type": "result", "session_id": "", "uuid": str(uuid.uuid4()), "subtype": "error_during_execution",
            "is_error": True, "result": text, "num_turns": 0, "duration_ms": 0, "duration_api_ms": 0,
            "total_cost_usd": 0.0, "usage": usage, "modelUsage": {}, "stop_reason": None, "permission_denials": [],
            "errors": [text], "fast_mode_state": "off", "fast_mode_disabled_reason": "unknown", "safety_stops": 0,
            "queued_turn_count": 0, "result_index": 0,
            "written_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")}


SCRIPTED = "scripted:"


def run_request(prompt: str, options: dict[str, Any], *, env: dict[str, str] | None = None,
                **run: Unpack[RunFlags]) -> RunRequest:
    """The ``covey_run`` control request: the session's options (``SessionOptions`` fields as
    JSON, every path absolute; the service validates them), the run's own flags (output
    format, live view, ...) apart from them, and the whole environment (``env``, default
    this process's). ``prompt`` travels in the next line (``user_message``)."""
    sent = dict(options)
    cwd = os.path.abspath(sent.pop("cwd", None) or ".")
    model = sent.get("model")
    if isinstance(model, str) and model.startswith(SCRIPTED):
        sent["model"] = SCRIPTED + os.path.abspath(model[len(SCRIPTED):])
    if trace := run.get("trace"):
        run["trace"] = os.path.abspath(trace)
    body: RunBody = {"subtype": "covey_run", "cwd": cwd, "env": dict(os.environ if env is None else env),
                     "options": sent, "run": run}
    return {"type": "control_request", "request_id": new_request_id(), "request": body}
