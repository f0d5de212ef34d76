"""Handler fields: ``if``, ``async``, ``args`` (exec form), ``http`` hooks, per-event timeouts."""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from covey.hooks import HookRegistry
from tests.hooks.scripts import dump_stdin, py_hook, read_json


def _registry(tmp_path, hooks) -> HookRegistry:
    return HookRegistry(hooks, project_dir=tmp_path, session_id="sess-1", transcript_path="/main.jsonl")


def _if_hook(tmp_path, rule: str, out) -> dict:
    hook = {"type": "command", "command": dump_stdin(tmp_path, "d", out), "if": rule}
    return {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [hook]}], "Stop": [{"hooks": [hook]}]}


@pytest.mark.parametrize("command, runs", [
    ("git push", True),
    ("FOO=bar git push", True),  # leading assignments are stripped
    ("npm test && git push", True),  # each subcommand is checked
    ("ls -la", False),
    ("echo $(git status)", True),  # commands inside $() are checked
])
async def test_if_runs_the_hook_only_for_matching_bash_calls(tmp_path, command, runs):
    out = tmp_path / "ran.json"
    registry = _registry(tmp_path, _if_hook(tmp_path, "Bash(git *)", out))
    await registry.run_pre_tool_use("a", "Bash", {"command": command}, subject=command)
    assert out.exists() is runs


async def test_if_on_a_file_tool_and_on_an_event_without_a_tool_call(tmp_path):
    out = tmp_path / "ran.json"
    registry = _registry(tmp_path, _if_hook(tmp_path, "Edit(*.ts)", out))
    await registry.run_pre_tool_use("a", "Edit", {"file_path": str(tmp_path / "a.py")}, subject=str(tmp_path / "a.py"))
    assert not out.exists()
    await registry.run_stop("a", subagent=False)  # Claude Code: `if` on a non-tool event never runs the hook
    assert not out.exists()
    await registry.run_pre_tool_use("a", "Edit", {"file_path": str(tmp_path / "a.ts")}, subject=str(tmp_path / "a.ts"))
    assert read_json(out)["payload"]["tool_name"] == "Edit"


async def test_an_async_hook_does_not_block_and_what_it_says_comes_later(tmp_path):
    go, started = tmp_path / "go", tmp_path / "started"
    # The hook waits for a file the test writes only after the hook event returned:
    # had the event waited for the hook, it could never have returned.
    waits = py_hook(tmp_path, "waits", (
        "import pathlib, time\n"
        f"pathlib.Path({str(started)!r}).touch()\n"
        f"while not pathlib.Path({str(go)!r}).exists(): time.sleep(0.02)\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PostToolUse', 'additionalContext': 'lint: 2 warnings'}}))\n"
    ))
    hooks = {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": waits, "async": True, "timeout": 30}]}]}
    registry = _registry(tmp_path, hooks)
    outcome = await registry.run_post_tool_use("a", "Write", {"file_path": "/x"}, {"content": "ok"})
    assert outcome.additional_context is None and registry.background.running == 1
    assert registry.background.take() is None
    go.touch()
    await registry.background.settle(grace_s=30)
    assert started.exists() and registry.background.take() == "PostToolUse hook additional context: lint: 2 warnings"


async def test_a_background_hook_still_running_when_its_agent_ends_is_stopped(tmp_path):
    never = py_hook(tmp_path, "never", "import time\ntime.sleep(60)\n")
    hooks = {"Stop": [{"hooks": [{"type": "command", "command": never, "async": True}]}]}
    registry = _registry(tmp_path, hooks)
    await registry.run_stop("a", subagent=False)
    await registry.background.settle(grace_s=0.1)
    assert registry.background.running == 0


async def test_exec_form_passes_each_argument_as_written(tmp_path):
    import sys

    out = tmp_path / "args.json"
    script = tmp_path / "argv.py"
    script.write_text(f"import json, sys\nopen({str(out)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    hook = {"type": "command", "command": sys.executable, "args": [str(script), "it's $HOME", "${CLAUDE_PROJECT_DIR}"]}
    await _registry(tmp_path, {"Stop": [{"hooks": [hook]}]}).run_stop("a", subagent=False)
    assert read_json(out) == ["it's $HOME", str(tmp_path)]


class _Recorder(BaseHTTPRequestHandler):
    seen: list = []
    reply: bytes = b""

    def do_POST(self):  # noqa: N802 (http.server's spelling)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).seen.append({"path": self.path, "payload": json.loads(body),
                                "auth": self.headers.get("Authorization"), "type": self.headers.get("Content-Type")})
        self.send_response(200)
        self.end_headers()
        self.wfile.write(type(self).reply)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Recorder.seen = []
    httpd = HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()


async def test_an_http_hook_posts_the_payload_and_its_json_answer_decides(tmp_path, server):
    _Recorder.reply = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                         "permissionDecisionReason": "policy"}}).encode()
    url = f"http://127.0.0.1:{server.server_port}/hooks/pre"
    hook = {"type": "http", "url": url, "headers": {"Authorization": "Bearer $TOKEN $SECRET"}, "allowedEnvVars": ["TOKEN"]}
    registry = HookRegistry({"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}, project_dir=tmp_path,
                            env={"TOKEN": "t0k", "SECRET": "s3"})
    outcome = await registry.run_pre_tool_use("a", "Bash", {"command": "ls"}, tool_use_id="toolu_1")
    assert outcome.blocked and outcome.reason == "policy"
    (seen,) = _Recorder.seen
    assert seen["path"] == "/hooks/pre" and seen["type"] == "application/json"
    assert seen["auth"] == "Bearer t0k "  # only allowed variables are interpolated
    assert seen["payload"]["tool_input"] == {"command": "ls"} and seen["payload"]["hook_event_name"] == "PreToolUse"


async def test_an_http_hooks_plain_text_answer_is_a_non_blocking_error(tmp_path, server, caplog):
    _Recorder.reply = b"blocked!"
    hook = {"type": "http", "url": f"http://127.0.0.1:{server.server_port}/"}
    outcome = await _registry(tmp_path, {"UserPromptSubmit": [{"hooks": [hook]}]}).run_user_prompt_submit("hi")
    assert not outcome.blocked and outcome.additional_context is None
    assert "not a JSON object" in caplog.text


async def test_an_unreachable_http_hook_does_not_stop_the_action(tmp_path):
    hook = {"type": "http", "url": "http://127.0.0.1:9/nothing-listens", "timeout": 5}
    outcome = await _registry(tmp_path, {"PreToolUse": [{"hooks": [hook]}]}).run_pre_tool_use("a", "Bash", {"command": "ls"})
    assert not outcome.blocked
