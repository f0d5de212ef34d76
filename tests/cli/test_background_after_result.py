"""A background child that speaks after the main agent's turn has its answer: ``covey -p
--output-format stream-json`` prints its messages, and holds that turn's result until the run's
last, as Claude Code 2.1.337 does (tests/data/claude_code/subagent_bg)."""

from __future__ import annotations

import contextlib
import io
import json
import threading
import time
from typing import Any

import pytest

from covey.cli import main as cli
from tests.cli.claude_code_shapes import DATA
from tests.fake_messages_api import FakeMessagesAPI, rules_replier


def _child_waits_for_the_main_answer(cwd: str) -> Any:
    """The scenario's replies, but the child answers only after the main agent's first turn has its own."""
    answer = rules_replier(json.loads((DATA / "subagent_bg" / "rules.json").read_text()), cwd)
    main_answered = threading.Event()

    def reply(body: dict[str, Any]) -> Any:
        out = answer(body)
        if "SUBAGENT_CHILD_RESULT_MARKER" in json.dumps(out):
            main_answered.wait(60)
            time.sleep(0.5)  # the main agent's result is out by now
        elif "waiting" in json.dumps(out):
            main_answered.set()
        return out

    return reply


@pytest.mark.ray
def test_a_child_speaking_after_the_main_turn_streams_and_the_results_close_the_run(kit_pool, tmp_path, monkeypatch):
    argv = json.loads((DATA / "subagent_bg" / "argv.json").read_text())[1:]
    out = io.StringIO()
    with FakeMessagesAPI([_child_waits_for_the_main_answer(str(tmp_path))]) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("COVEY_SERVICE", "1")  # the session borrows from ``kit_pool``
        with contextlib.redirect_stdout(out):
            cli.main([*argv, "--no-service", "--cwd", str(tmp_path)])
    events = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    said = [(e["parent_tool_use_id"] is not None, e["message"]["content"][0].get("text"))
            for e in events if e["type"] == "assistant" and e["message"]["content"][0]["type"] == "text"]
    assert said == [(False, "waiting"), (True, "SUBAGENT_CHILD_RESULT_MARKER"), (False, "SUBAGENT_PARENT_OK")]
    kinds = [e.get("subtype") or e["type"] for e in events]
    child = next(i for i, e in enumerate(events) if e.get("parent_tool_use_id") and e["type"] == "assistant")
    assert kinds.index("task_notification") > child and kinds[-2:] == ["success", "success"]
    assert [e["result"] for e in events[-2:]] == ["waiting", "SUBAGENT_PARENT_OK"]
    assert [e["result_index"] for e in events[-2:]] == [0, 1]
