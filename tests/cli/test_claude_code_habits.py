"""What a Claude Code user types works on covey: stdin joined to the prompt as Claude Code joins it,
``-p`` as a switch, a bare prompt, ``--version``, ``--help`` that lists the run's flags, ``--verbose``
wherever stream-json is printed, and the short ids ``covey ps`` shows accepted wherever an id is."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest

from covey.cli import main as cli
from covey.cli import argv as cli_argv
from covey.cli import inspect
from covey.cli.sessions import resolve_session
from covey.client import ports as protocol
from covey.errors import CoveyError, UserError
from tests.fake_messages_api import FakeMessagesAPI
from tests.inprocess_covey import covey_here
from tests.service.conftest import client_env, service_root  # noqa: F401  (a fixture)
from tests.service.fake_service import FakeService, result

COVEY = [sys.executable, "-m", "covey"]
SESSION = "0b9c9a40-0000-4000-8000-0000000000aa"
TWIN = "0b9c1111-0000-4000-8000-0000000000bb"


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, dict]]:
    """What each run would send (its prompt and options), nothing started."""
    runs: list[tuple[str, dict]] = []
    monkeypatch.setattr(cli, "_execute", lambda prompt, options, args, **_: runs.append((prompt, options)) or 0)
    return runs


def _main(monkeypatch, *argv: str, stdin: str = "") -> int:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    return cli.main(list(argv))


@pytest.mark.parametrize("argv, stdin, prompt", [
    (["-p", "explain"], "PIPED\n", "explain\nPIPED\n"),  # Claude Code: [prompt, stdin].filter(Boolean).join("\n")
    (["-p"], "q\n", "q\n"),  # the prompt from stdin alone
    (["-p", "q"], "", "q"),  # an empty stdin adds nothing
    (["-p", "--model", "haiku", "q"], "", "q"),  # -p is a switch: flags may come between it and the prompt
    (["--model", "haiku", "-p", "q"], "", "q"),
    (["say ok"], "", "say ok"),  # a bare prompt runs in print mode (covey has no interactive mode)
    (["explain", "--output-format", "json"], "PIPED", "explain\nPIPED"),
])
def test_the_prompt_is_what_claude_code_would_send(monkeypatch, sent, argv, stdin, prompt):
    assert _main(monkeypatch, *argv, stdin=stdin) == 0
    assert [p for p, _ in sent] == [prompt]


def test_flags_before_the_prompt_still_set_their_options(monkeypatch, sent):
    assert _main(monkeypatch, "-p", "--model", "haiku", "--max-turns", "3", "q") == 0
    assert sent[0][1]["model"] == "haiku" and sent[0][1]["max_turns"] == 3


def test_no_prompt_at_all_is_one_line(monkeypatch, sent, capsys):
    assert _main(monkeypatch, "-p") == 1
    assert sent == [] and capsys.readouterr().err.startswith("covey: no prompt given")


def test_a_near_miss_of_a_command_is_not_sent_to_the_model(monkeypatch, sent, capsys):
    assert _main(monkeypatch, "stauts") == 1
    assert sent == []
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean `covey status`?" in err[0]


def test_an_sdk_conversation_never_waits_on_stdin_for_a_prompt(monkeypatch):
    def never(*_: object, **__: object) -> str:
        raise AssertionError("stdin read as a prompt while the SDK drives the conversation")

    monkeypatch.setattr(cli_argv, "piped_stdin", never)
    monkeypatch.setattr(cli, "_converse", lambda options, args: 0)
    argv = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
    assert _main(monkeypatch, *argv, stdin="{}") == 0


def test_a_pipe_nobody_writes_is_waited_on_briefly_then_passed_over(capsys):
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(read_end, encoding="utf-8") as stdin:
            started = time.monotonic()
            assert cli_argv.piped_stdin(stdin, wait_s=0.2) == ""
            assert time.monotonic() - started < 2
    finally:
        os.close(write_end)
    assert "no stdin data received" in capsys.readouterr().err


def test_a_pipe_is_read_to_its_end():
    read_end, write_end = os.pipe()
    os.write(write_end, b"line 1\nline 2\n")
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8") as stdin:
        assert cli_argv.prompt_of("explain", stdin, wait_s=5) == "explain\nline 1\nline 2\n"


def test_an_unreadable_stdin_leaves_the_prompt_argument_alone(capsys):
    class Unreadable(io.StringIO):
        def read(self, size: int | None = -1) -> str:
            raise OSError("unreadable")

    assert cli_argv.prompt_of("q", Unreadable(), wait_s=5) == "q"
    assert "cannot read stdin (unreadable)" in capsys.readouterr().err


def test_a_terminal_is_never_read():
    main_fd, terminal_fd = pty.openpty()
    try:
        with os.fdopen(terminal_fd, encoding="utf-8", closefd=False) as stdin:
            started = time.monotonic()
            assert cli_argv.prompt_of("q", stdin, wait_s=30) == "q"
            assert time.monotonic() - started < 5
    finally:
        os.close(main_fd)
        os.close(terminal_fd)


def test_version_is_printed_as_claude_code_prints_its_own():
    for flag in ("--version", "-v"):
        done = subprocess.run([*COVEY, flag], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stdout == f"{metadata.version('covey')} (covey)\n", done.stderr


def test_help_lists_the_run_flags_and_the_commands_without_importing_the_runtime():
    code = ("import sys\nfrom covey.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit as exc:\n"
            "    assert exc.code == 0\nheavy = [m for m in ('ray', 'pydantic') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for shown in ("-p, --print", "--model", "--output-format", "--allowed-tools", "--verbose", "--version",
                  "  attach ", "  sessions "):
        assert shown in done.stdout, shown


def test_a_commands_error_points_at_its_own_help(monkeypatch, capsys):
    with pytest.raises(SystemExit) as exit_:
        _main(monkeypatch, "attach")
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().endswith("(covey attach --help lists its flags)")


def _sessions(home: Path, *ids: str) -> None:
    folder = home / ".covey" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    for session_id in ids:
        (folder / f"{session_id}.json").write_text(json.dumps({"session_id": session_id, "status": "running"}))


def test_a_unique_start_of_a_session_id_names_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    _sessions(tmp_path, SESSION, TWIN)
    assert resolve_session(SESSION[:8]) == SESSION and resolve_session(SESSION) == SESSION
    assert resolve_session("ffffffff") is None
    with pytest.raises(CoveyError, match=f"several sessions' ids \\({TWIN}, {SESSION}\\)"):
        resolve_session("0b9c")


def test_attach_takes_the_short_id_and_verbose(service_root, tmp_path):
    _sessions(tmp_path, SESSION)

    def script(peer, request, _prompt):
        session_id = request["request"]["session_id"]
        peer.send(protocol.success(request["request_id"], {"session_id": session_id, "output_format": "text"}))
        peer.send(result("done"))
        peer.send({"type": protocol.DONE})

    with FakeService(service_root, script) as fake:
        done = subprocess.run([*COVEY, "attach", SESSION[:8], "--output-format", "stream-json", "--verbose"],
                              env=client_env(service_root, HOME=str(tmp_path)), capture_output=True, text=True,
                              timeout=60, start_new_session=True)
    assert done.returncode == 0, done.stderr
    assert fake.runs[0][0]["request"]["session_id"] == SESSION
    assert [json.loads(line)["type"] for line in done.stdout.splitlines()] == ["result"]


def test_kill_takes_the_short_id_of_a_session(monkeypatch, tmp_path, service_root, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    _sessions(tmp_path, SESSION)
    assert _main(monkeypatch, "kill", SESSION[:8]) == 1  # no service answers: the session is named in full
    assert f"session {SESSION} is not running" in capsys.readouterr().err


class _Registry:
    def __init__(self, *agent_ids: str) -> None:
        self.records_ = [SimpleNamespace(agent_id=agent_id) for agent_id in agent_ids]

    async def record(self, agent_id: str):
        return next((r for r in self.records_ if r.agent_id == agent_id), None)

    async def records(self):
        return self.records_


def test_a_unique_start_of_an_agent_id_names_it(monkeypatch):
    first, second = _Registry("agent-0123456789abcdef"), _Registry("agent-01ffffffffffffff", "agent-9999999999999999")
    monkeypatch.setattr(inspect, "registries", lambda: [first, second])
    assert inspect.run(inspect._find("agent-0123"))[1].agent_id == "agent-0123456789abcdef"
    assert inspect.run(inspect._find("9999"))[1].agent_id == "agent-9999999999999999"  # "agent-" left out
    assert inspect.run(inspect._find("agent-7")) is None
    with pytest.raises(UserError, match="agent-0123456789abcdef, agent-01ffffffffffffff"):
        inspect.run(inspect._find("agent-01"))


def test_tree_and_team_take_a_start_of_a_session_id_and_name_the_ones_it_fits(monkeypatch):
    async def running():
        return {SESSION[:8]: "first", TWIN[:8]: "second"}

    async def show(prefix, registry):
        return f"{prefix}:{registry}"

    monkeypatch.setattr(inspect, "targets", lambda address: [inspect.Target("127.0.0.1:1")])
    monkeypatch.setattr(inspect, "joined", lambda target: _nothing())
    monkeypatch.setattr(inspect, "running_sessions", running)
    assert inspect.in_session(None, SESSION[:6], show) == f"{SESSION[:8]}:first"
    with pytest.raises(UserError, match=f"several running sessions' ids \\({SESSION[:8]}, {TWIN[:8]}\\)"):
        inspect.in_session(None, "0b9c", show)


def _nothing():
    import contextlib

    return contextlib.nullcontext()


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_piped_text_reaches_the_model_after_the_prompt(tmp_path):
    with FakeMessagesAPI(replies=[{"text": "ok"}]) as api:
        done = covey_here("-p", "--output-format", "json", "explain", cwd=tmp_path, stdin="PIPED\n",
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "x"})
    assert done.returncode == 0, done.stderr
    said = [message["content"] for message in api.requests[0]["messages"] if message["role"] == "user"]
    blocks = [block if isinstance(block, str) else block.get("text", "") for content in said
              for block in ([content] if isinstance(content, str) else content)]
    assert "explain\nPIPED\n" in blocks  # one block: the prompt, a newline, the piped text
