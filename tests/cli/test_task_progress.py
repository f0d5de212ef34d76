"""End to end through ``covey -p --output-format stream-json`` against the fake Messages API: a
sub-agent's ``task_progress`` lines, a background one's and a sync one's (docs/subagents.md#progress-summaries). Each reply of
the child that calls tools gives one (``last_tool_name``), as Claude Code's; with progress
summaries switched on, its forked summary requests reach the API and their answers come as
``task_progress`` lines with a ``summary``; switched off, no summary is asked for or shown."""

from __future__ import annotations

import json
import time

import pytest

from covey.model.prompt_cache import PromptCache, breakpoints
from tests.fake_messages_api import FakeMessagesAPI
from tests.inprocess_covey import covey_here

SUMMARY = "Reading hello.txt"


def _text(body: dict) -> str:
    return json.dumps(body["messages"][-1]["content"])


def _reply(body: dict, background: bool = True) -> dict:
    """The main agent launches one child; the child reads twice, slowly, then answers."""
    system = " ".join(block.get("text", "") for block in body.get("system") or [])
    last = _text(body)
    if "3 to 5 words" in last:  # a progress summary request, forked from the child's
        return {"text": SUMMARY}
    if "You are covey" in system:
        if "<task-notification>" in last:
            return {"text": "all done"}
        if "tool_result" in last:
            return {"text": "waiting" if background else "all done"}
        return {"content": [{"type": "tool_use", "id": "toolu_bg", "name": "Agent", "input": {
            "description": "Read the greeting", "prompt": "Read hello.txt twice",
            "subagent_type": "general-purpose", "run_in_background": background}}]}
    reads = json.dumps(body["messages"]).count('"tool_result"')
    time.sleep(0.4)  # long enough for summaries to fall due while the child works
    if reads < 2:
        return {"content": [{"type": "tool_use", "id": f"toolu_r{reads}", "name": "Read",
                             "input": {"file_path": "hello.txt"}}]}
    return {"text": "the greeting says hello"}


def _run(tmp_path, summaries: bool, background: bool = True) -> tuple[list[dict], list[dict]]:
    (tmp_path / "hello.txt").write_text("hello\n")
    env = {"ANTHROPIC_API_KEY": "test-key-not-real", "COVEY_AGENT_PROGRESS_INTERVAL_MS": "150"}
    if summaries:
        env["COVEY_AGENT_PROGRESS_SUMMARIES"] = "1"
    with FakeMessagesAPI([lambda body: _reply(body, background)]) as api:
        env["ANTHROPIC_BASE_URL"] = api.url
        done = covey_here("-p", "go", "--output-format", "stream-json", "--verbose", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()], api.requests


def _plain(value):
    """``value`` without its cache breakpoints, a message's text as the API reads it (a block)."""
    if isinstance(value, dict):
        if isinstance(value.get("content"), str) and "role" in value:
            value = {**value, "content": [{"type": "text", "text": value["content"]}]}
        return {key: _plain(item) for key, item in value.items() if key != "cache_control"}
    return [_plain(item) for item in value] if isinstance(value, list) else value


def _progress(lines: list[dict]) -> list[dict]:
    return [line for line in lines if line.get("subtype") == "task_progress"]


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")
def test_with_summaries_on_a_background_child_reports_its_progress_with_summaries(tmp_path):
    lines, requests = _run(tmp_path, summaries=True)
    (started,) = [line for line in lines if line.get("subtype") == "task_started"]
    progress = _progress(lines)
    tools = [line for line in progress if "last_tool_name" in line]
    summaries = [line for line in progress if "summary" in line]
    assert [line["last_tool_name"] for line in tools] == ["Read", "Read"]
    assert [line["usage"]["tool_uses"] for line in tools] == [1, 2]
    assert summaries and all(line["summary"] == line["description"] == SUMMARY for line in summaries)
    for line in progress:
        assert line["task_id"] == started["task_id"] and line["tool_use_id"] == started["tool_use_id"]
        assert line["run_id"] == started["run_id"]
        assert line["subagent_type"] == "general-purpose" and line["session_id"] == started["session_id"]
        assert line["usage"]["total_tokens"] > 0 and line["usage"]["duration_ms"] >= 0 and line["uuid"]
    assert tools[0]["description"] == "Reading hello.txt"  # what the call does, in Claude Code's words
    # The summary requests reached the API as the child's own requests with one more question.
    asked = [body for body in requests if "3 to 5 words" in _text(body)]
    assert asked and all("You are covey" not in json.dumps(body["system"]) for body in asked)
    child_turn = next(body for body in requests if "You are covey" not in json.dumps(body["system"])
                      and "3 to 5 words" not in _text(body))
    assert asked[0]["system"] == child_turn["system"] and asked[0]["tools"] == child_turn["tools"]
    before = [body for body in requests[:requests.index(asked[0])] if "You are covey" not in json.dumps(body["system"])]
    last = before[-1]["messages"]  # the child's request before the summary's: its messages start the summary's
    assert _plain(asked[0]["messages"][:len(last)]) == _plain(last)
    # The prompt cache serves a summary all of the child's conversation (replayed in the order the API
    # got them, through the fake API's cache model): it reads up to its breakpoint before the question.
    cache, served = PromptCache(), []
    for body in requests:
        usage = cache.usage(body)
        if "3 to 5 words" in _text(body):
            served.append(usage["cache_read_input_tokens"] == breakpoints(body)[-2]["tokens"])
    assert any(served), served
    # All of it before the child's end is told.
    (notified,) = [i for i, line in enumerate(lines) if line.get("subtype") == "task_notification"]
    assert all(lines.index(line) < notified for line in progress)
    assert lines[-1]["type"] == "result" and lines[-1]["is_error"] is False


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")
def test_with_summaries_off_no_summary_is_asked_for_or_shown(tmp_path):
    lines, requests = _run(tmp_path, summaries=False)
    progress = _progress(lines)
    assert [line["last_tool_name"] for line in progress] == ["Read", "Read"]  # Claude Code's, always
    assert not any("summary" in line for line in progress)
    assert not any("3 to 5 words" in _text(body) for body in requests)
    assert lines[-1]["type"] == "result" and lines[-1]["is_error"] is False


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")
def test_a_sync_childs_progress_comes_in_the_stream_too(tmp_path):
    """As Claude Code 2.1.337 sends them for a foreground sub-agent, with its messages."""
    lines, requests = _run(tmp_path, summaries=True, background=False)
    (started,) = [line for line in lines if line.get("subtype") == "task_started"]
    assert started["is_backgrounded"] is False
    progress = _progress(lines)
    assert [line["last_tool_name"] for line in progress if "last_tool_name" in line] == ["Read", "Read"]
    assert any(line.get("summary") == SUMMARY for line in progress)
    assert all(line["task_id"] == started["task_id"] and line["run_id"] == started["run_id"] for line in progress)
    (notified,) = [i for i, line in enumerate(lines) if line.get("subtype") == "task_notification"]
    assert all(lines.index(line) < notified for line in progress)
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "all done"
