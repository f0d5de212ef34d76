"""``covey attach`` and a detached run's permission prompts: the run asks even with nobody
attached (its prompt waits in the journal), an attached reader answers it over stdio or leaves
it open (never denies it for want of a terminal), and ``covey sessions`` names what waits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from covey.cli.sessions import session_cells
from covey.client import ports as protocol
from tests.service.conftest import client_env
from tests.service.fake_service import FakeService, result

COVEY = [sys.executable, "-m", "covey"]
SESSION = "0b9c9a40-0000-4000-8000-0000000000aa"
ASK = protocol.control_request("can_use_tool", "perm-1", tool_name="Bash", input={"command": "touch x"},
                               message="Allow Bash (touch x)?", suggested_rule="Bash(touch x)")
ALLOW = protocol.success("perm-1", {"behavior": "allow", "updatedInput": {"command": "touch x"}})


def _attached(answers: list, *, wait: bool = True) -> object:
    """A service whose attached session asks one prompt, then waits for one line from the reader
    (``wait=False``: another client answered it; the run ends, and what the reader sent is read after)."""
    def script(peer, request, _prompt):
        peer.send(protocol.success(request["request_id"], {"session_id": SESSION, "output_format": "text"}))
        peer.send({"type": "system", "subtype": "init", "session_id": SESSION, "uuid": "u0"})
        peer.send(ASK)
        if wait:
            answers.append(peer.receive())
        peer.send(result("made"))
        peer.send({"type": protocol.DONE})
        if not wait:
            answers.append(peer.receive())
    return script


def _attach(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([*COVEY, "attach", SESSION, *args], input=stdin, env=client_env(root),
                          capture_output=True, text=True, timeout=60, start_new_session=True)  # no /dev/tty


def test_a_reader_with_the_stdio_tool_prints_the_prompt_and_sends_the_answer_it_reads(service_root):
    answers: list = []
    with FakeService(service_root, _attached(answers)):
        done = _attach(service_root, "--permission-prompt-tool", "stdio", stdin=json.dumps(ALLOW) + "\n")
    assert done.returncode == 0, done.stderr
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    assert [m["type"] for m in printed] == ["system", "control_request", "result"]  # stream-json by default
    assert printed[1]["request_id"] == "perm-1" and printed[1]["request"]["tool_name"] == "Bash"
    assert answers == [ALLOW]


def test_a_reader_that_cannot_answer_leaves_the_prompt_open_and_says_so(service_root):
    answers: list = []
    with FakeService(service_root, _attached(answers, wait=False)):
        done = _attach(service_root)  # text output, no terminal: it cannot ask anybody
    assert done.returncode == 0 and done.stdout == "made\n", done.stderr
    assert answers == [None], answers  # it sent nothing (no deny): its connection closed at the run's end
    assert "waits for an answer to 'Allow Bash (touch x)?'" in done.stderr, done.stderr


def test_the_stdio_tool_needs_stream_json(service_root):
    done = _attach(service_root, "--permission-prompt-tool", "stdio", "--output-format", "text")
    assert done.returncode == 1 and "needs --output-format stream-json" in done.stderr


def test_sessions_names_the_prompt_a_running_session_waits_on():
    entry = {"session_id": SESSION, "status": "running", "started_at": 0, "cwd": "/p", "agents_running": 1,
             "questions": 1, "waiting": [{"request_id": "perm-1", "tool_name": "Bash", "message": "Allow Bash (touch x)?"}],
             "detached": True}
    line = "  ".join(session_cells(entry))
    assert "1 question(s) waiting for a client (Allow Bash (touch x)?)" in line
    assert f"`covey attach {SESSION}` answers" in line


def test_a_detached_run_asks_its_prompts_even_with_no_client_to_answer_them():
    from covey.service.runs import ServedRun

    def served(**run: object) -> ServedRun:
        request = protocol.control_request(protocol.RUN, cwd="/p", env={}, options={}, run=run)
        return ServedRun(request, None, None)  # type: ignore[arg-type]

    assert served(detach=True).asker is not None  # its prompts wait in the journal for `covey attach`
    assert served(can_ask=True).asker is not None
    assert served().asker is None  # a -p run with no terminal is denied by the policy at once, as before
