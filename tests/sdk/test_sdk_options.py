"""The SDK's options that covey took up last: ``output_format``, ``thinking`` /
``max_thinking_tokens``, ``effort``, ``betas``, ``task_budget``; and the ones it refuses."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from claude_agent_sdk import ClaudeSDKClient, ConversationResetMessage, HookMatcher, ResultMessage, query
from claude_agent_sdk._errors import ProcessError, ResultError

from tests.sdk.conftest import REFERENCE_CLI
from tests.sdk.test_sdk_compat import collect, tool_results

pytestmark = pytest.mark.ray  # the covey service runs a Ray

COVEY_ONLY_FAKE = pytest.mark.skipif(
    bool(os.environ.get(REFERENCE_CLI)),
    reason="not yet checked against Claude Code: this fake's replies are keyed to covey's requests (Claude Code "
           "also sends its own small-model and sub-agent requests the fake does not tell apart)")


SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "founded": {"type": "integer"}},
          "required": ["city", "founded"]}


@pytest.fixture(autouse=True)
def _everything_given_back(served):
    yield
    served.wait_all_given_back(timeout_s=30)


def _think_then_answer(body: dict[str, Any]) -> dict[str, Any]:
    """A thinking reply whose first answer misses the schema, then one that matches it."""
    thinking = {"type": "thinking", "thinking": "Recall it.", "signature": "sig"}
    misses = [r for r in tool_results(body).values() if r.get("is_error")]
    city = {"city": "Paris"} if not misses else {"city": "Paris", "founded": 250}
    call = {"type": "tool_use", "id": f"toolu_{len(body['messages'])}", "name": "StructuredOutput", "input": city}
    return {"content": [thinking, call]}


async def test_output_format_thinking_and_effort_end_in_structured_output(sdk_options, fake_api):
    fake_api.replies = [_think_then_answer]
    options = sdk_options(model="claude-opus-4-5", max_thinking_tokens=4000, effort="medium",
                          betas=["context-1m-2025-08-07"], output_format={"type": "json_schema", "schema": SCHEMA})

    messages = await collect(query(prompt="Where and when?", options=options))

    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success", messages
    assert result.structured_output == {"city": "Paris", "founded": 250}
    first, second = fake_api.requests
    # (Claude Code 2.1.332 also sends display: "updates"; covey sends display only when asked.)
    assert {k: first["thinking"][k] for k in ("type", "budget_tokens")} == {"type": "enabled", "budget_tokens": 4000}
    assert first["output_config"] == {"effort": "medium"}
    assert any(tool["name"] == "StructuredOutput" and tool["input_schema"] == SCHEMA for tool in first["tools"])
    missed = next(iter(tool_results(second).values()))
    assert missed["is_error"] and "founded" in str(missed["content"])  # the mismatch named
    assert {"context-1m-2025-08-07", "effort-2025-11-24"} <= set(fake_api.betas[0].split(","))


async def test_a_run_that_never_answers_in_the_schema_is_reminded_once_then_ends_as_it_is(sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": "I would rather not."}]
    options = sdk_options(output_format={"type": "json_schema", "schema": SCHEMA})

    result = (await collect(query(prompt="Where and when?", options=options)))[-1]

    assert isinstance(result, ResultMessage) and (result.subtype, result.is_error) == ("success", False)
    assert result.structured_output is None and len(fake_api.requests) == 2
    assert "StructuredOutput" in json.dumps(fake_api.requests[1]["messages"][-1])  # the reminder


async def test_calls_that_never_match_the_schema_end_in_claude_codes_error(sdk_options, fake_api):
    fake_api.replies = [lambda body: {"content": [
        {"type": "tool_use", "id": f"toolu_{len(body['messages'])}", "name": "StructuredOutput", "input": {"town": 1}}]}]
    options = sdk_options(output_format={"type": "json_schema", "schema": SCHEMA})

    # The SDK raises an error result, after yielding it, as ResultError (it carries the payload).
    with pytest.raises(ResultError) as failed:
        await collect(query(prompt="Where and when?", options=options))
    assert "Failed to provide valid structured output after 5 attempts" in str(failed.value)
    assert len(fake_api.requests) == 5


@pytest.mark.skipif(bool(os.environ.get(REFERENCE_CLI)), reason="covey's own refusal: Claude Code branches the original")
async def test_a_cut_without_a_fork_is_refused_in_one_line(sdk_options, fake_api, capsys):
    options = sdk_options(resume="11111111-1111-4111-8111-111111111111", resume_session_at="some-uuid")

    with pytest.raises(ProcessError):
        await collect(query(prompt="go on", options=options))
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[covey] ")]
    refusals = [line for line in said if "--resume-session-at" in line]
    assert len(refusals) == 1 and "--fork-session" in refusals[0], said


async def test_a_truncating_resume_forks_the_conversation_before_the_dropped_turn(sdk_options, fake_api, served,
                                                                                   monkeypatch):
    from pathlib import Path

    from claude_agent_sdk import get_session_messages

    # The run's user is the served environment's HOME: its ~/.claude is where the session is.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(Path(served.env["HOME"]) / ".claude"))
    fake_api.replies = [lambda body: {"text": f"reply {len(body['messages'])}"}]
    async with ClaudeSDKClient(options=sdk_options()) as client:
        await client.query("the word is PINEAPPLE")
        first = (await collect(client.receive_response()))[-1]
        await client.query("now forget it")
        await collect(client.receive_response())
    kept = [m for m in get_session_messages(first.session_id, directory=sdk_options().cwd)]
    answer, dropped = next(m for m in kept if m.type == "assistant"), [m for m in kept if m.type == "user"][1]

    options = sdk_options(resume=first.session_id, fork_session=True, resume_session_at=answer.uuid,
                          resume_drops_turn=dropped.uuid)
    result = (await collect(query(prompt="which word?", options=options)))[-1]

    assert isinstance(result, ResultMessage) and result.session_id != first.session_id
    history = json.dumps(fake_api.requests[-1]["messages"])
    assert "PINEAPPLE" in history and "now forget it" not in history and "which word?" in history


@pytest.mark.skipif(bool(os.environ.get(REFERENCE_CLI)),
                    reason="Claude Code 2.1.332 goes on after a PostToolUse continue: false (docs/definitions.md#hooks)")
async def test_a_hook_callback_that_says_stop_ends_the_run_hook_stopped(sdk_options, fake_api, tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    fake_api.replies = [lambda body: {"text": "too far"} if tool_results(body) else
                        {"content": [{"type": "tool_use", "id": "toolu_g", "name": "Glob", "input": {"pattern": "*"}}]}]

    async def post_tool_use(input_data: dict, tool_use_id: str | None, context: Any) -> dict:
        return {"continue_": False, "stopReason": "enough for today"}

    options = sdk_options(hooks={"PostToolUse": [HookMatcher(matcher="Glob", hooks=[post_tool_use])]})
    messages = await collect(query(prompt="look around", options=options))

    result = messages[-1]
    assert isinstance(result, ResultMessage), messages
    assert (result.subtype, result.is_error, result.terminal_reason) == ("success", False, "hook_stopped")
    assert result.result == "enough for today" and len(fake_api.requests) == 1  # no request after the hook


async def test_control_requests_right_after_connecting_wait_for_the_session(sdk_options, fake_api):
    """set_permission_mode and set_model sent before the session exists are answered once it
    does, in order, and the first turn runs with them (Claude Code queues them the same way)."""
    fake_api.replies = [lambda body: {"text": f"model {body['model']}"}]
    for attempt in range(3):  # a cold race once lost most such requests: try it more than once
        async with ClaudeSDKClient(options=sdk_options()) as client:
            await client.set_permission_mode("acceptEdits")
            await client.set_model("claude-haiku-4-5")
            await client.query(f"which model? {attempt}")
            result = (await collect(client.receive_response()))[-1]
        assert isinstance(result, ResultMessage) and result.result == "model claude-haiku-4-5", result


async def test_clear_starts_the_conversation_over_in_a_new_session(sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": f"seen {len(body['messages'])} messages"}]
    async with ClaudeSDKClient(options=sdk_options()) as client:
        await client.query("the word is PINEAPPLE")
        first = (await collect(client.receive_response()))[-1]
        await client.query("/clear")
        cleared = await collect(client.receive_response())
        await client.query("which word did I give you?")
        after = (await collect(client.receive_response()))[-1]

    [reset] = [m for m in cleared if isinstance(m, ConversationResetMessage)]
    assert reset.session_id == first.session_id and reset.new_conversation_id != first.session_id
    # new_conversation_id is opaque (not the next session id): the messages after the reset carry that.
    assert isinstance(cleared[-1], ResultMessage) and cleared[-1].session_id not in (first.session_id, None)
    assert after.session_id == cleared[-1].session_id and after.subtype == "success"
    last = [body for body in fake_api.requests if "which word did I give you?" in json.dumps(body["messages"])][-1]
    # The new conversation starts with the /clear command's record, as Claude Code's.
    assert "PINEAPPLE" not in json.dumps(last["messages"]) and "<command-name>/clear" in json.dumps(last["messages"])


def _calculator(calls: list[dict]) -> Any:
    """An SDK MCP server in this (the program's) process: ``@tool`` + ``create_sdk_mcp_server``."""
    from claude_agent_sdk import create_sdk_mcp_server, tool

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict) -> dict:
        calls.append(args)
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    return create_sdk_mcp_server("calc", tools=[add])


def _adds(body: dict[str, Any]) -> dict[str, Any]:
    """The main agent asks a child to add; the child (and only it) calls the program's tool."""
    results = tool_results(body)
    if "haiku" in body["model"]:  # Claude Code's own small-model requests (a task's progress summary)
        return {"text": "adding"}
    if "Add things." not in json.dumps(body["messages"]):  # the child: its conversation lacks the parent's prompt
        if results:
            return {"text": f"child got {next(iter(results.values()))['content']}"}
        return {"content": [{"type": "tool_use", "id": "toolu_c", "name": "mcp__calc__add", "input": {"a": 40, "b": 2}}]}
    if results:
        return {"text": "done: " + json.dumps([r["content"] for r in results.values()])}
    return {"content": [
        {"type": "tool_use", "id": "toolu_m", "name": "mcp__calc__add", "input": {"a": 2, "b": 3}},
        {"type": "tool_use", "id": "toolu_a", "name": "Agent",
         "input": {"description": "add", "prompt": "ADD FOR ME", "subagent_type": "general-purpose"}}]}


@COVEY_ONLY_FAKE
async def test_an_in_process_sdk_tool_serves_the_main_agent_and_a_sub_agent(sdk_options, fake_api):
    calls: list[dict] = []
    fake_api.replies = [_adds]
    options = sdk_options(mcp_servers={"calc": _calculator(calls)}, allowed_tools=["mcp__calc__add"])

    messages = await collect(query(prompt="Add things.", options=options))

    init = next(m for m in messages if getattr(m, "subtype", None) == "init")
    # Asked at the first turn, as Claude Code connects it: listed connected, its tool among init's tools.
    assert {"name": "calc", "status": "connected", "source": "sdk"} in init.data["mcp_servers"]
    assert "mcp__calc__add" in init.data["tools"]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success", messages
    assert sorted((c["a"], c["b"]) for c in calls) == [(2, 3), (40, 2)]  # the user's function ran, twice
    assert "sum=5" in result.result and "child got" in result.result and "sum=42" in result.result
    first = fake_api.requests[0]
    assert any(t["name"] == "mcp__calc__add" for t in first["tools"])


def _delegates(body: dict[str, Any]) -> dict[str, Any]:
    if "haiku" in body["model"]:  # Claude Code's own small-model requests (a task's progress summary)
        return {"text": "looking"}
    if "Delegate." not in json.dumps(body["messages"]):  # the child: its conversation lacks the parent's prompt
        if tool_results(body):
            return {"text": "CHILD SAYS the folder is empty"}
        return {"content": [{"type": "text", "text": "CHILD THINKS aloud"},
                            {"type": "tool_use", "id": "toolu_cg", "name": "Glob", "input": {"pattern": "*"}}]}
    if tool_results(body):
        return {"text": "parent done"}
    return {"content": [{"type": "tool_use", "id": "toolu_a", "name": "Agent",
                         "input": {"description": "look", "prompt": "LOOK AROUND", "subagent_type": "general-purpose"}}]}


@COVEY_ONLY_FAKE
@pytest.mark.parametrize("forward", [False, True])
async def test_sub_agent_text_reaches_the_program_only_when_it_asks(sdk_options, fake_api, forward):
    from claude_agent_sdk import AssistantMessage, TextBlock, ToolUseBlock

    fake_api.replies = [_delegates]
    messages = await collect(query(prompt="Delegate.", options=sdk_options(forward_subagent_text=forward)))

    child = [m for m in messages if isinstance(m, AssistantMessage) and m.parent_tool_use_id == "toolu_a"]
    texts = [b.text for m in child for b in m.content if isinstance(b, TextBlock)]
    assert any(isinstance(b, ToolUseBlock) and b.name == "Glob" for m in child for b in m.content), messages
    assert texts == (["CHILD THINKS aloud", "CHILD SAYS the folder is empty"] if forward else []), texts
    assert messages[-1].result == "parent done"


async def test_a_result_echoes_the_hosts_origin_and_the_messages_it_took_in(sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": "hello"}]

    async def prompts():
        yield {"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": None,
               "uuid": "11111111-aaaa-4aaa-8aaa-111111111111", "origin": {"kind": "human"}}

    async with ClaudeSDKClient(options=sdk_options()) as client:
        await client.query(prompts())
        result = (await collect(client.receive_response()))[-1]
    assert isinstance(result, ResultMessage) and result.origin == {"kind": "human"}
    assert result.user_message_uuid == "11111111-aaaa-4aaa-8aaa-111111111111"
    assert result.user_message_uuids == ["11111111-aaaa-4aaa-8aaa-111111111111"]


@COVEY_ONLY_FAKE
async def test_compact_summarises_the_conversation_with_claude_codes_events(sdk_options, fake_api):
    from claude_agent_sdk import SystemMessage

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if "keep the word" in json.dumps(body["messages"][-1]):  # the request /compact makes: the summary's
            return {"text": "<summary>SUMMARY: the word is PINEAPPLE</summary>"}
        return {"text": "noted"}

    fake_api.replies = [reply]
    async with ClaudeSDKClient(options=sdk_options()) as client:
        await client.query("the word is PINEAPPLE")
        await collect(client.receive_response())
        await client.query("/compact keep the word")
        compacting = await collect(client.receive_response())
        await client.query("which word?")
        await collect(client.receive_response())

    [boundary] = [m for m in compacting if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    assert boundary.data["compact_metadata"]["trigger"] == "manual"
    assert isinstance(compacting[-1], ResultMessage) and compacting[-1].subtype == "success"
    summary_request = next(b for b in fake_api.requests if "summar" in json.dumps(b["messages"][-1]).lower())
    assert "keep the word" in json.dumps(summary_request["messages"][-1])  # the instructions reach the summary
    last = json.dumps(fake_api.requests[-1]["messages"])
    assert "SUMMARY: the word is PINEAPPLE" in last and "/compact" not in last


@COVEY_ONLY_FAKE
async def test_a_session_store_gets_every_record_of_the_main_agent_and_a_sync_child(sdk_options, fake_api):
    from claude_agent_sdk._internal.session_store import InMemorySessionStore

    fake_api.replies = [_delegates]
    store = InMemorySessionStore()
    options = sdk_options(session_store=store)
    # The SDK keys the store by paths under the config dir it knows: the program's CLAUDE_CONFIG_DIR.
    options.env["CLAUDE_CONFIG_DIR"] = options.env["HOME"] + "/.claude"
    messages = await collect(query(prompt="Delegate.", options=options))

    session_id = messages[-1].session_id
    keys = [key for key in store._store if f"/{session_id}" in key]
    main = next(key for key in keys if key.endswith(session_id))
    child = next(key for key in keys if "/subagents/" in key)
    main_entries = store._store[main]
    child_entries = [e for e in store._store[child] if e.get("type") != "agent_metadata"]  # Claude Code's: no sessionId
    said = json.dumps(main_entries)
    assert "Delegate." in said and "toolu_a" in said and "parent done" in said  # prompt, the Agent call, the answer
    assert all(e["sessionId"] == session_id for e in main_entries + child_entries)
    assert any("CHILD SAYS" in json.dumps(e) for e in child_entries)  # the child's own records
    assert len({e["uuid"] for e in main_entries}) == len(main_entries)  # each record once
