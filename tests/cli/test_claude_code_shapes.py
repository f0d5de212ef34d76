"""covey's ``-p --output-format stream-json --verbose`` against Claude Code 2.1.337's, scenario by scenario.

Each scenario of tests/data/claude_code runs once through ``covey.cli.main.main`` (in this process,
on the test session's Ray, ``--no-service``, its session borrowing pooled actors and a recycled
kit as a served run does: the events ``covey -p`` prints) against the fake
Messages API answering by the scenario's ``rules.json``, as Claude Code's recorded run was.
Every covey event must have a recorded event of its kind, with every key Claude Code has and
the same JSON value types (``claude_code_shapes``); where covey differs and cannot honestly
close the difference here, ``GAPS`` says where and why, and nothing else may differ.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from typing import Any

import pytest

from covey.cli import main as cli
from tests.cli.claude_code_shapes import DATA, best_match, key_names, kind, recorded, scenarios
from tests.fake_messages_api import FakeMessagesAPI, rules_replier

HELLO = "line one\nHELLO_FILE_CONTENT_42\n"

SCENARIOS = ["read", "write", "subagent_sync", "subagent_bg", "max_turns"]
"""A plain turn, a denied call, a sync child, a background child and its notification,
``--max-turns 1``. (``subagent`` is Claude Code's run without ``run_in_background``: Claude
Code backgrounds such a child, covey runs it in the foreground; the two runs above cover both.)"""

_ADAPTER = "covey's Anthropic adapter (covey/gateway/anthropic.py) keeps no stream timings"
_SESSION = "the session (covey/session.py) would fill it from the registry's records"
_THINKING = "covey does not count thinking tokens apart"
GAPS: dict[str, dict[str, str]] = {
    # a kind's prefix -> path -> why covey differs there; nothing is invented to close a gap
    "system/init": {
        "memory_paths": "covey has no auto-memory directory",
        "messaging_socket_path": "covey has no messaging socket",
    },
    "user:tool_result": {
        "tool_result_meta": "the permission gate (covey/loop/gate.py) does not record each call's decision",
        # A completed sync child's result (covey/subagents/agent_tool.py): Claude Code's harness notes are its own.
        "tool_use_result.harnessNoteCount": "covey has no harness notes",
        "tool_use_result.harnessTailCount": "covey has no harness notes",
        "tool_use_result.harnessSectionHash": "covey has no harness notes",
        "tool_use_result.adviceNotes": "covey has no advice notes",
        "tool_use_result.usage.output_tokens_details": _THINKING,
        "tool_use_result.usage.inference_geo": "covey does not know where the request was served",
    },
    "result/": {
        "subagent_stats": _SESSION, "model_usage_since_last_result": _SESSION,
        "ttft_ms": _ADAPTER, "ttft_stream_ms": _ADAPTER, "time_to_request_ms": _ADAPTER,
        "first_content_frame_ms": _ADAPTER,
        "usage.output_tokens_details": _THINKING, "modelUsage[*].thinkingTokens": _THINKING,
        "usage.inference_geo": "covey does not know where the request was served",
        # keys covey has and Claude Code's result of this kind has not
        "errors": "issue 14 asks for errors as a list on every result (Claude Code's success has none)",
        "result": "covey's text output prints an error result's text (Claude Code's error_max_turns has none)",
    },
}
"""Where covey's events differ from Claude Code's, each with the reason."""

COVEY_ONLY_KINDS: dict[str, str] = {}
"""Kinds of event covey prints and Claude Code never does, each with the reason: none. (A
notification-driven turn's user message is in the transcript, not on stdout, as in Claude Code.)"""
CLAUDE_ONLY_KINDS: dict[str, str] = {}
"""Kinds of event Claude Code prints and covey does not, each with the reason: none."""


def gaps_of(event_kind: str) -> dict[str, str]:
    return {path: why for prefix, paths in GAPS.items() if event_kind.startswith(prefix) for path, why in paths.items()}


def run_covey(scenario: str, cwd) -> list[dict[str, Any]]:
    """``covey -p`` with the scenario's command line, in ``cwd``: the JSON lines it prints."""
    (cwd / "hello.txt").write_text(HELLO)
    rules = json.loads((DATA / scenario / "rules.json").read_text())
    argv = json.loads((DATA / scenario / "argv.json").read_text())[1:]
    out = io.StringIO()
    with FakeMessagesAPI([rules_replier(rules, str(cwd))]) as api, pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANTHROPIC_BASE_URL", api.url)
        patch.setenv("ANTHROPIC_API_KEY", "test")
        patch.setenv("COVEY_POOL_SIZE", "2")
        patch.setenv("COVEY_SERVICE", "1")  # the session borrows from ``kit_pool``
        with contextlib.redirect_stdout(out):
            cli.main([*argv, "--no-service", "--cwd", str(cwd)])
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def covey_runs(kit_pool, tmp_path_factory):
    """Each scenario's events, run once for every test of this module."""
    runs: dict[str, list[dict[str, Any]]] = {}

    def events(scenario: str) -> list[dict[str, Any]]:
        if scenario not in runs:
            runs[scenario] = run_covey(scenario, tmp_path_factory.mktemp(scenario))
        return runs[scenario]

    return events


@pytest.fixture(scope="module")
def claude_keys() -> set[str]:
    return set().union(*(key_names(recorded(name)) for name in scenarios()))


@pytest.mark.ray
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_event_has_claude_code_s_keys_and_value_types(scenario, covey_runs, claude_keys):
    ours, everywhere = covey_runs(scenario), [e for name in scenarios() for e in recorded(name)]
    problems = []
    for index, event in enumerate(ours):
        what = kind(event)
        if what in COVEY_ONLY_KINDS:
            continue
        candidates = [e for e in recorded(scenario) if kind(e) == what] or [e for e in everywhere if kind(e) == what]
        if not candidates:
            problems.append(f"event {index} {what}: Claude Code prints no event of this kind")
            continue
        problems += [f"event {index} {what}: {p}" for p in best_match(candidates, event, claude_keys, gaps_of(what))]
    assert not problems, f"{scenario}: covey's events differ from Claude Code's:\n" + "\n".join(problems)


@pytest.mark.ray
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_kind_of_event_claude_code_prints_covey_prints(scenario, covey_runs):
    theirs = {kind(e) for e in recorded(scenario)} - set(CLAUDE_ONLY_KINDS)
    missing = theirs - {kind(e) for e in covey_runs(scenario)}
    assert not missing, f"{scenario}: covey prints no {sorted(missing)}"


ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.mark.ray
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_ids_times_and_parents_are_claude_code_s(scenario, covey_runs):
    events = covey_runs(scenario)
    uuids = [e.get("uuid") for e in events]
    assert all(isinstance(u, str) and re.fullmatch(r"[0-9a-f-]{36}", u) for u in uuids) and len(set(uuids)) == len(uuids)
    for event in (e for e in events if e["type"] in ("assistant", "user")):
        assert ISO_MS.match(event["timestamp"]), event
        assert "parent_tool_use_id" in event, f"{kind(event)} without parent_tool_use_id"
        # A child's message names its parent's Agent call and itself; a main one carries null.
        assert (event["parent_tool_use_id"] is None) == ("agent_id" not in event), event
    assert events[0]["subtype"] == "init" and events[0]["claude_code_version"] == "2.1.337"
    assert events[0]["covey_version"] and "covey_version" not in set().union(*map(key_names, map(recorded, scenarios())))


@pytest.mark.ray
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_one_result_per_main_turn_and_none_for_a_child(scenario, covey_runs):
    _one_result_per_main_turn(scenario, recorded(scenario), figures=False)  # Claude Code's order meets it too
    _one_result_per_main_turn(scenario, covey_runs(scenario))


def _one_result_per_main_turn(scenario: str, events: list[dict[str, Any]], figures: bool = True) -> None:
    results = [i for i, e in enumerate(events) if e["type"] == "result"]
    assert results and results[-1] == len(events) - 1
    assert not figures or all(isinstance(events[i]["errors"], list) for i in results)
    assert [events[i]["result_index"] for i in results] == list(range(len(results)))
    # Each turn of the main agent opens with system/init; a result that is not the run's last
    # waits for the next (Claude Code 2.1.337), so the results close the run together.
    inits = [i for i, e in enumerate(events) if e.get("subtype") == "init"]
    assert len(inits) == len(results) and results == list(range(results[0], len(events)))
    for start, end, index in zip(inits, [*inits[1:], results[0]], results):
        mains = [e for e in events[start:end] if e["type"] == "assistant" and e["parent_tool_use_id"] is None]
        # A result counts its turn's requests only (a reply is a message per content block, all
        # with the reply's message id) and says the text of its turn's last reply.
        assert mains and (not figures or events[index]["num_turns"] == len({e["message"]["id"] for e in mains}))
        if events[index]["subtype"] == "success":
            assert events[index]["result"] == "".join(b.get("text", "") for b in mains[-1]["message"]["content"])
    if scenario != "subagent_bg":
        assert len(results) == 1
    else:  # the notification's turn: announced by system/init, its result says what woke it
        [started] = [e for e in events if e.get("subtype") == "task_started"]
        child = [i for i, e in enumerate(events) if e["type"] == "assistant" and e["parent_tool_use_id"]]
        notified = [e.get("subtype") for e in events].index("task_notification")
        # The child spoke after the main agent's first turn had its answer, and still streams.
        assert child and inits[0] < child[0] < notified < inits[1]
        assert "origin" not in events[results[0]]
        assert events[results[1]]["origin"] == {"kind": "task-notification", "producer": "session-task",
                                                "runId": started["run_id"]}
    stop = events[results[-1]]["stop_reason"]
    assert stop in (None, "end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal")


@pytest.mark.ray
@pytest.mark.parametrize("scenario", ["subagent_sync", "subagent_bg"])
def test_a_child_s_task_events_frame_its_messages(scenario, covey_runs):
    events = covey_runs(scenario)
    (started_at,) = [i for i, e in enumerate(events) if e.get("subtype") == "task_started"]
    started = events[started_at]
    assert started["task_type"] == "local_agent" and started["is_backgrounded"] == (scenario == "subagent_bg")
    call = next(e for e in events if e["type"] == "assistant" and any(
        b.get("name") == "Agent" for b in e["message"]["content"]))
    assert started["tool_use_id"] == call["message"]["content"][0]["id"]
    children = [i for i, e in enumerate(events) if e.get("parent_tool_use_id")]
    assert all(i > started_at and events[i]["parent_tool_use_id"] == started["tool_use_id"] for i in children)
    assert all(events[i]["subagent_type"] == "general-purpose" and events[i]["task_description"] for i in children)
    (updated_at,) = [i for i, e in enumerate(events) if e.get("subtype") == "task_updated"]
    (notified_at,) = [i for i, e in enumerate(events) if e.get("subtype") == "task_notification"]
    assert started_at < updated_at == notified_at - 1 and all(i < updated_at for i in children)
    notification = events[notified_at]
    assert notification["task_id"] == started["task_id"] and notification["tool_use_id"] == started["tool_use_id"]
    assert notification["status"] == "completed" and notification["summary"] == "SUBAGENT_CHILD_RESULT_MARKER"
    assert notification["output_file"].endswith(".jsonl") and notification["usage"]["total_tokens"] > 0
    answer = next(i for i, e in enumerate(events) if e["type"] == "user" and any(
        b.get("tool_use_id") == started["tool_use_id"] for b in e["message"]["content"] if isinstance(b, dict)))
    block = next(b for b in events[answer]["message"]["content"] if b.get("tool_use_id") == started["tool_use_id"])
    assert isinstance(block["content"], list) and block["content"][0]["type"] == "text"
    result = events[answer]["tool_use_result"]
    if scenario == "subagent_sync":
        # Claude Code reports a sync child's end before its tool_result.
        assert notified_at < answer and result["status"] == "completed" and result["content"][0]["type"] == "text"
        assert not any(e.get("subtype") == "background_tasks_changed" for e in events)
    else:
        assert answer < notified_at and result["status"] == "async_launched" and result["isAsync"] is True
        assert notification["summary_is_report"] is True
        changes = [e["tasks"] for e in events if e.get("subtype") == "background_tasks_changed"]
        assert [[t["task_id"] for t in tasks] for tasks in changes] == [[started["task_id"]], []]


@pytest.mark.ray
def test_a_denied_call_is_reported_before_its_tool_result(covey_runs):
    events = covey_runs("write")
    (denied_at,) = [i for i, e in enumerate(events) if e.get("subtype") == "permission_denied"]
    answer = next(i for i, e in enumerate(events) if e["type"] == "user")
    denied, block = events[denied_at], events[answer]["message"]["content"][0]
    assert denied_at < answer and denied["tool_name"] == "Write" and denied["tool_use_id"] == block["tool_use_id"]
    assert denied["message"] == block["content"] and events[answer]["tool_use_result"] == f"Error: {block['content']}"
    (denial,) = events[-1]["permission_denials"]
    assert denial["tool_name"] == "Write" and denial["tool_input"]["content"] == "x\n"


@pytest.mark.ray
def test_max_turns_ends_on_an_error_result_with_api_stop_reason(covey_runs):
    result = covey_runs("max_turns")[-1]
    assert result["subtype"] == "error_max_turns" and result["is_error"] is True
    assert result["terminal_reason"] == "max_turns" and result["stop_reason"] == "tool_use"
    assert result["errors"] == ["Reached maximum number of turns (1)"]


@pytest.mark.ray
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_claude_agent_sdk_parses_every_event_and_its_receive_response_ends_on_the_main_result(scenario, covey_runs):
    from claude_agent_sdk import ResultMessage
    from claude_agent_sdk._internal.message_parser import parse_message

    messages = [parse_message(event) for event in covey_runs(scenario)]
    # receive_response() ends at the first ResultMessage: that must be the main turn's, at its end.
    first = next(i for i, m in enumerate(messages) if isinstance(m, ResultMessage))
    assert messages[first].result == covey_runs(scenario)[first].get("result")
    assert not any(getattr(m, "parent_tool_use_id", None) for m in messages[first:])
    if scenario != "subagent_bg":
        assert first == len(messages) - 1
