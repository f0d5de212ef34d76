"""The thin client against an in-test fake service: output, exit codes, permission
prompts, interrupts, a service that dies, and what it imports (no Ray, no pydantic)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import termios
from datetime import datetime
from pathlib import Path

import pytest

from covey.cli import served as client
from covey.client import ports as protocol
from tests.observe.terminal import Screen
from tests.service.conftest import client_env
from tests.service.fake_service import INIT, FakeService, result

COVEY = [sys.executable, "-m", "covey"]
DONE = {"type": protocol.DONE}


def _answer(*lines):
    def script(peer, run, prompt):
        for line in lines:
            peer.send(line)
    return script


def _covey(root: Path, *args: str, cwd: Path, timeout: int = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*COVEY, *args], cwd=cwd, env=client_env(root, CLIENT_MARK="marked"),
                          capture_output=True, text=True, timeout=timeout)


def test_the_request_carries_absolute_paths_the_whole_environment_and_the_prompt(service_root, tmp_path):
    with FakeService(service_root, _answer(INIT, result("hello"), DONE)) as fake:
        done = _covey(service_root, "-p", "say hi", "--model", "scripted:rules.yaml", "--cwd", "sub",
                      "--trace", "t.json", "--max-turns", "3", "--allowed-tools", "Read,Bash(git status)",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (run, prompt), = fake.runs
    request = run["request"]
    assert request["subtype"] == "covey_run" and request["cwd"] == str(tmp_path / "sub")
    assert request["env"]["CLIENT_MARK"] == "marked" and request["env"]["COVEY_SERVICE_DIR"] == str(service_root)
    options, flags = request["options"], request["run"]
    assert options["model"] == f"scripted:{tmp_path / 'rules.yaml'}" and flags["trace"] == str(tmp_path / "t.json")
    assert options["max_turns"] == 3 and options["allowed_tools"] == ["Read", "Bash(git status)"]
    assert flags["output_format"] == "text" and flags["can_ask"] is False and flags["live"] is True
    assert "cwd" not in options and set(options) == {"model", "max_turns", "allowed_tools", "address", "child_events"}
    assert options["child_events"] is False  # text output prints no sub-agent's event: none is shipped
    assert prompt == {"type": "user", "message": {"role": "user", "content": "say hi"}}


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_output_is_what_an_in_process_run_prints(service_root, tmp_path, output_format):
    events = [INIT, {"type": "assistant", "message": {"role": "assistant", "content": []}}, result("hello")]
    lines = [*events[:1], protocol.stderr_line("covey: a warning"), {"type": protocol.LIVE, "tree": {}},
             *events[1:], DONE]
    with FakeService(service_root, _answer(*lines)):
        done = _covey(service_root, "-p", "go", "--output-format", output_format, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "covey: a warning" in done.stderr.splitlines()
    expected = {"text": "hello\n", "json": json.dumps(events[-1]) + "\n",
                "stream-json": "".join(json.dumps(e) + "\n" for e in events)}[output_format]
    assert done.stdout == expected


def test_an_error_result_exits_1_naming_its_subtype(service_root, tmp_path):
    with FakeService(service_root, _answer(result("too many turns\nmore", is_error=True, subtype="error_max_turns"),
                                           DONE)):
        done = _covey(service_root, "-p", "go", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == "too many turns\nmore\n"
    assert done.stderr.splitlines()[-1] == "covey: error_max_turns: too many turns"


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_run_that_cannot_start_says_why(service_root, tmp_path, output_format):
    failure = result("unknown model 'sonet'", is_error=True, subtype="error_during_execution")
    lines = [protocol.error("x", "unknown model 'sonet'"), failure,
             {"type": protocol.DONE, "error": "unknown model 'sonet'"}]
    with FakeService(service_root, _answer(*lines)):
        done = _covey(service_root, "-p", "go", "--output-format", output_format, cwd=tmp_path)
    assert done.returncode == 1
    if output_format == "text":  # as in-process: the cause on stderr, nothing on stdout
        assert done.stdout == "" and done.stderr.strip() == "covey: unknown model 'sonet'"
    else:
        assert json.loads(done.stdout) == failure
        assert done.stderr.strip() == "covey: error_during_execution: unknown model 'sonet'"


def test_a_service_that_dies_mid_run_makes_the_client_exit_1_with_a_clear_error(service_root, tmp_path):
    with FakeService(service_root, _answer(INIT)):  # then the connection closes
        done = _covey(service_root, "-p", "go", "--output-format", "stream-json", cwd=tmp_path)
    assert done.returncode == 1
    init, failed = [json.loads(line) for line in done.stdout.splitlines()]
    assert init == INIT
    # A script reading JSON gets the cause as the failure result it parses, as in-process.
    assert failed["type"] == "result" and failed["is_error"] is True
    assert "the covey service stopped during the run" in failed["result"]
    assert "covey: the covey service stopped during the run" in done.stderr and "next run starts a new one" in done.stderr


def test_the_clients_failure_result_has_the_shape_of_covey_s_own():
    from covey.events import ResultEvent

    ours, theirs = protocol.failure_result("boom"), ResultEvent.failure("boom").wire()
    assert ours.pop("uuid") and theirs.pop("uuid")  # a fresh one each
    written = [datetime.fromisoformat(line.pop("written_at").replace("Z", "+00:00")) for line in (ours, theirs)]
    assert abs((written[1] - written[0]).total_seconds()) < 60  # when each was written
    assert ours == theirs


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_sends_an_interrupt_and_the_client_exits_128_plus_it(service_root, tmp_path, signum):
    received = []

    def script(peer, run, prompt):
        peer.send(INIT)
        interrupt = peer.receive()
        received.append(interrupt)
        peer.send(protocol.success(interrupt["request_id"]))
        peer.send(protocol.stderr_line("covey: kept worktree /w (branch covey/x)"))
        peer.send({"type": protocol.DONE, "interrupted": True})

    with FakeService(service_root, script) as fake:
        proc = subprocess.Popen([*COVEY, "-p", "go", "--quiet"], cwd=tmp_path, env=client_env(service_root),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert fake.started.wait(30)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum
    assert protocol.subtype_of(received[0]) == "interrupt"
    assert err.splitlines()[-2:] == [
        "covey: kept worktree /w (branch covey/x)",
        f"covey: interrupted by {signal.Signals(signum).name}; every agent was stopped"]
    assert out == ""


def test_a_permission_prompt_is_asked_at_the_terminal_and_answered(service_root, monkeypatch, capsys):
    suggestion = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm publish"}],
                  "behavior": "allow", "destination": "session"}
    answers = []

    def script(peer, run, prompt):
        peer.send(protocol.control_request("can_use_tool", "perm-1", tool_name="Bash", input={"command": "npm publish"},
                                           permission_suggestions=[suggestion], decision_reason="ask rule 'Bash'",
                                           message="Allow Bash (npm publish)?", suggested_rule="Bash(npm publish)"))
        answers.append(peer.receive())
        peer.send(result("published"))
        peer.send(DONE)

    master, slave = os.openpty()
    os.write(master, b"a\n")
    monkeypatch.setattr(client, "TTY", os.ttyname(slave))
    with FakeService(service_root, script):
        code = client.run_served("go", {"cwd": "."}, "text", False, quiet=True)
    shown = _drain(master)
    os.close(master), os.close(slave)
    assert code == 0 and capsys.readouterr().out == "published\n"
    assert "Allow Bash (npm publish)?" in shown and "a = always allow Bash(npm publish)" in shown
    assert answers == [protocol.success("perm-1", {"behavior": "allow", "updatedInput": {"command": "npm publish"},
                                                   "updatedPermissions": [suggestion]})]


def _drain(fd: int) -> str:
    """What was written to the pty (its echo of the typed answer included)."""
    import select

    text = b""
    while select.select([fd], [], [], 0.2)[0]:
        text += os.read(fd, 4096)
    return text.decode()


def test_without_a_terminal_a_prompt_is_denied_with_the_reason(service_root, tmp_path):
    answers = []

    def script(peer, run, prompt):
        peer.send(protocol.control_request("can_use_tool", "perm-1", tool_name="Bash", input={},
                                           suggested_rule="Bash(rm x)", message="Allow?"))
        answers.append(peer.receive())
        peer.send(result("ok"))
        peer.send(DONE)

    with FakeService(service_root, script):
        proc = subprocess.run([*COVEY, "-p", "go", "--quiet"], cwd=tmp_path, env=client_env(service_root),
                              capture_output=True, text=True, timeout=60, start_new_session=True)  # no /dev/tty
    assert proc.returncode == 0, proc.stderr
    response = answers[0]["response"]["response"]
    assert response["behavior"] == "deny" and "No terminal" in response["message"] and "Bash(rm x)" in response["message"]


def test_the_client_path_imports_neither_ray_nor_pydantic_nor_covey_runtime(service_root, tmp_path):
    code = ("import sys\nfrom covey.cli.main import main\nrc = main(['-p', 'go', '--output-format', 'json'])\n"
            "heavy = ('ray', 'pydantic', 'covey.session', 'covey.events', 'anthropic', 'yaml', 'rich')\n"
            "print('IMPORTED', [m for m in heavy if m in sys.modules], file=sys.stderr)\nsys.exit(rc)\n")
    with FakeService(service_root, _answer(INIT, result("hello"), DONE)):
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=client_env(service_root),
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "hello"
    assert "IMPORTED []" in done.stderr.splitlines()


def test_on_a_narrow_terminal_the_live_tree_fits_and_its_last_frame_is_the_final_one(service_root, tmp_path):
    """stderr (and stdin) a terminal 40 columns wide: the tree's rows fit it, each snapshot is drawn over
    the last, and the final tree the service sends before ``covey_done`` stays above the result."""
    def node(status: str, *children: dict) -> dict:
        return {"agent_id": f"agent-{status}-{len(children)}", "type": "general-purpose", "status": status,
                "description": "d", "turns": 2, "subtree_tokens": 5000, "subtree_cost_usd": 0.5,
                "member_name": "a-member-name-longer-than-the-terminal-is-wide-for-sure", "children": list(children)}

    snapshots = [node("running"), node("running", node("running"), node("running")),
                 node("completed", node("completed"), node("failed"))]
    lines = [INIT, *({"type": protocol.LIVE, "tree": tree} for tree in snapshots), result("hello"), DONE]
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 20, 40, 0, 0))
    env = {k: v for k, v in client_env(service_root).items() if k not in ("COLUMNS", "LINES")}
    with FakeService(service_root, _answer(*lines)):
        proc = subprocess.Popen([*COVEY, "-p", "go"], cwd=tmp_path, env=env, stdin=slave, stdout=subprocess.PIPE,
                                stderr=slave)
        out, _ = proc.communicate(timeout=60)
    os.close(slave)
    screen = Screen(40).feed(_read_closed(master))
    assert proc.returncode == 0 and out == b"hello\n"
    shown = screen.lines()
    assert screen.wraps == 0 and len(shown) == 3, shown
    assert [line.split()[-1] for line in shown] == ["completed", "completed", "failed"], shown


def _read_closed(master: int) -> str:
    """All a pty's terminal end holds once its other end is closed everywhere (then reading it fails)."""
    text = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(master, 4096):
            text += chunk
    os.close(master)
    return text.decode()
