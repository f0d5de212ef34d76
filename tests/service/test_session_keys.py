"""Run options are one list, ``SessionOptions``: every field travels from the command line
through the thin client and the service to the Session unchanged, and nothing else does.

Fast: no Ray, no service process; the pieces are driven directly (argparse, ``run_request``,
the JSON line, ``client_options`` / ``session_for``) with the Session replaced by a recorder
where only its options matter. The samples come from the model, so a new field needs no
line here.
"""

from __future__ import annotations

import os
import types
import typing
from pathlib import Path
from typing import Any

import pytest

import covey
from covey.cli import main as cli
from covey.cli.flags import OPTION, session_options
from covey.client import ports as protocol
from covey.client.ports import run_request
from covey.errors import UserError
from covey.service import session_options as served
from covey.service.session_options import SERVICE_OWNED, SESSION_KEYS, client_options, session_for
from covey.session import Session, SessionOptions

OK = Path(covey.__file__).parent / "cli" / "scenarios" / "ok.yaml"


def _sample(name: str) -> Any:
    """A JSON value of the field's type that is not its default."""
    info = SessionOptions.model_fields[name]
    union = typing.get_origin(info.annotation) in (typing.Union, types.UnionType)
    if typing.get_origin(info.annotation) is typing.Literal:
        return next(value for value in reversed(typing.get_args(info.annotation)) if value != info.default)
    kinds = {typing.get_origin(kind) or kind for kind in (typing.get_args(info.annotation) if union else (info.annotation,))}
    for kind, value in ((bool, not info.default if isinstance(info.default, bool) else True), (int, 7),
                        (float, 0.5), (str, f"{name}-value"), (dict, {"key": "value"}), (list, [f"{name}-item"])):
        if kind in kinds:
            return value
    return f"{name}-value"  # typed Any


def _over_the_wire(options: dict[str, Any]) -> dict[str, Any]:
    """What the service reads: the client's request, as the JSON line it sends."""
    return protocol.decode(protocol.encode(run_request("go", options, output_format="text")))["request"]


@pytest.fixture
def received(monkeypatch):
    """The options the served Session is built with (the Session itself is not built)."""
    seen: list[SessionOptions] = []
    monkeypatch.setattr(served, "Session", lambda options: seen.append(options) or options)
    return seen


def _run_flags():
    run = cli._parser()._subparsers._group_actions[0].choices["run"]
    return [action for action in run._actions if action.dest.startswith(OPTION)]


def test_the_service_passes_on_every_session_option_but_those_it_owns():
    assert set(SESSION_KEYS) == set(SessionOptions.model_fields) - SERVICE_OWNED
    assert {"mcp_servers", "strict_mcp_config"} <= set(SESSION_KEYS)


def test_every_run_flag_names_a_session_option():
    fields = {action.dest[len(OPTION):] for action in _run_flags()}
    assert fields and fields <= set(SessionOptions.model_fields), fields - set(SessionOptions.model_fields)
    assert fields & SERVICE_OWNED == {"cwd"}  # it travels apart, as the request's cwd


@pytest.mark.parametrize("flag", [action.option_strings[0] for action in _run_flags()])
def test_each_flag_travels_from_the_command_line_to_the_session_unchanged(flag, received, tmp_path):
    action = next(a for a in _run_flags() if a.option_strings[0] == flag)
    value_file = tmp_path / "value.json"  # a file, JSON text, a path: what any flag's value may be
    value_file.write_text('{"mcpServers": {}}')
    value = {int: "7", float: "0.5"}.get(action.type, action.choices[-1] if action.choices else str(value_file))
    value = str(tmp_path) if flag == "--project-config-root" else value  # (a folder that exists)
    args = cli._parser().parse_args(["run", "-p", "x", flag, *([value] if action.nargs != 0 else [])])
    options = session_options(args)
    field = action.dest[len(OPTION):]
    assert list(options) == [field]
    request = _over_the_wire(options)
    session_for(request)
    sent = os.path.abspath(options[field]) if field == "cwd" else options[field]
    assert getattr(received[0], field) == sent


def test_every_option_a_client_may_send_reaches_the_session_unchanged(received, tmp_path):
    sent = {name: _sample(name) for name in SESSION_KEYS}
    request = _over_the_wire({**sent, "cwd": str(tmp_path)})
    session_for(request, asker="the asker", service=False)
    options = received[0]
    assert {name: getattr(options, name) for name in SESSION_KEYS} == sent
    assert (options.cwd, options.asker, options.service) == (str(tmp_path), "the asker", False)
    assert options.env is not None and options.env["PATH"] == os.environ["PATH"]  # the client's environment


@pytest.mark.parametrize("name", SESSION_KEYS)
def test_each_option_alone_keeps_every_other_default(name, received):
    session_for(_over_the_wire({name: _sample(name)}))
    defaults = SessionOptions()
    changed = {field for field in SESSION_KEYS if getattr(received[0], field) != getattr(defaults, field)}
    assert changed == {name}


@pytest.mark.parametrize("options, says", [
    ({"verbose_tagx": "x"}, "verbose_tagx: Extra inputs are not permitted"),
    ({"max_turns": "many"}, "max_turns: Input should be a valid integer"),
    ({"allowed_tools": "Read"}, "allowed_tools: Input should be a valid list"),
    ({"pool_size": 3}, "sets the run option(s) pool_size itself"),
    ({"transcript_dir": "/tmp/x", "limits": {}}, "limits, transcript_dir itself"),
])
def test_a_bad_option_fails_the_run_naming_the_field(options, says):
    with pytest.raises(UserError) as caught:
        client_options({"cwd": "/", "options": options})
    assert says in str(caught.value)


def test_mcp_config_through_the_service_reaches_the_session(tmp_path):
    server = {"mcpServers": {"echo": {"command": "python3", "args": ["-c", "pass"]}}}
    request = {"cwd": str(tmp_path), "env": {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
               "options": {"model": f"scripted:{OK}", "mcp_servers": [server], "strict_mcp_config": True}}
    session = session_for(request, service=False)
    assert isinstance(session, Session)
    assert session.options.mcp_servers == [server] and session.options.strict_mcp_config is True
    assert "echo" in session.mcp.servers
