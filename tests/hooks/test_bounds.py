"""A hook's output is bounded: in memory while it is read, and in what reaches the model."""

import asyncio
import threading
import tracemalloc
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from covey.common.bounded import cut_text, read_bounded
from covey.hooks import HookRegistry
from covey.hooks.command import HOOK_OUTPUT_LIMIT_CHARS, HOOK_READ_LIMIT_CHARS, read_answer, run_command
from covey.hooks.config import CommandHook
from tests.hooks.scripts import answer, py_hook

_BIG = 50_000_000


def _prompt_hooks(command: str) -> dict:
    return {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}


async def test_a_hook_printing_50_mb_brings_the_cap_and_a_note_into_the_context(tmp_path):
    registry = HookRegistry(_prompt_hooks(f"yes x | head -c {_BIG}"), project_dir=tmp_path)
    outcome = await asyncio.wait_for(registry.run_user_prompt_submit("hi"), 60)
    context = outcome.additional_context
    head, note = context.rsplit("\n", 1)
    assert len(head) == HOOK_OUTPUT_LIMIT_CHARS and set(head) <= {"x", "\n"}
    assert note == f"[hook output cut: {_BIG:,} characters, first {HOOK_OUTPUT_LIMIT_CHARS:,} kept]"


async def test_a_hook_printing_50_mb_is_not_held_in_memory(tmp_path):
    hook = CommandHook(command=f"yes x | head -c {_BIG}")
    tracemalloc.start()
    try:
        answer_ = await asyncio.wait_for(
            run_command(hook, {"hook_event_name": "UserPromptSubmit"}, cwd=tmp_path, project_dir=tmp_path), 60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answer_.text is not None and len(answer_.text) < HOOK_OUTPUT_LIMIT_CHARS + 100
    assert peak < 10 * HOOK_READ_LIMIT_CHARS  # far under the 50 MB the hook printed


async def test_exit_2_stderr_is_cut_too(tmp_path):
    hook = CommandHook(command=py_hook(tmp_path, "loud", "sys.stderr.write('e' * 30_000)\nsys.exit(2)\n"))
    answer_ = await run_command(hook, {"hook_event_name": "PreToolUse"}, cwd=tmp_path, project_dir=tmp_path)
    assert answer_.blocked and answer_.reason.endswith("[hook output cut: 30,000 characters, first 10,000 kept]")


async def test_json_answer_texts_are_cut_but_updated_input_is_whole(tmp_path):
    reply = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "c" * 20_000,
                                    "updatedInput": {"content": "u" * 50_000}}, "reason": "r" * 12_000}
    hook = CommandHook(command=answer(tmp_path, "big", reply))
    answer_ = await run_command(hook, {"hook_event_name": "PreToolUse"}, cwd=tmp_path, project_dir=tmp_path)
    assert answer_.additional_context.startswith("c" * HOOK_OUTPUT_LIMIT_CHARS + "\n[hook output cut: 20,000")
    assert answer_.reason.endswith("[hook output cut: 12,000 characters, first 10,000 kept]")
    assert answer_.updated_input == {"content": "u" * 50_000}


def test_a_json_answer_read_only_in_part_is_plain_text_not_a_decision():
    out = '{"decision": "block", "reason": "' + "z" * 100
    answer_ = read_answer("h", 0, out, "", out_total=HOOK_READ_LIMIT_CHARS * 3)
    assert not answer_.blocked and answer_.text.endswith(f"[hook output cut: {HOOK_READ_LIMIT_CHARS * 3:,} characters, "
                                                         f"first 10,000 kept]")


def test_cut_text_keeps_short_text_whole_and_names_the_hint():
    assert cut_text("abc", 3) == "abc"
    assert cut_text("abcdef", 3, what="tool output", hint="narrow it") == (
        "abc\n[tool output cut: 6 characters, first 3 kept; narrow it]")


async def test_read_bounded_keeps_the_head_and_counts_the_rest():
    reader = asyncio.StreamReader()
    reader.feed_data("é".encode() * 200_000)
    reader.feed_eof()
    captured = await read_bounded(reader, 1000)
    assert captured.text == "é" * 1000 and captured.total_chars == 200_000 and not captured.complete


class _Huge(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's spelling)
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.end_headers()
        try:
            self.wfile.write(b"{" + b" " * (HOOK_READ_LIMIT_CHARS * 3) + b"}")
        except OSError:
            return  # the hook stopped reading at its limit and closed the connection

    def log_message(self, *args):
        return


@pytest.fixture
def huge_server():
    httpd = HTTPServer(("127.0.0.1", 0), _Huge)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


async def test_an_http_hook_body_over_the_read_limit_is_a_non_blocking_error(tmp_path, huge_server, caplog):
    hook = {"type": "http", "url": f"http://127.0.0.1:{huge_server.server_port}/"}
    registry = HookRegistry({"UserPromptSubmit": [{"hooks": [hook]}]}, project_dir=tmp_path)
    outcome = await registry.run_user_prompt_submit("hi")
    assert not outcome.blocked and outcome.additional_context is None
    assert f"body over {HOOK_READ_LIMIT_CHARS:,} bytes" in caplog.text
