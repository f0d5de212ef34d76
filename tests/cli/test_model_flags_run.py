"""``covey -p`` with Claude Code's model flags against a Messages API on 127.0.0.1: thinking kept
in the history as the API demands, effort and betas sent, the final answer through
StructuredOutput and printed as the result's ``structured_output``."""

from __future__ import annotations

import json

import pytest

from tests.fake_messages_api import FakeMessagesAPI
from tests.inprocess_covey import covey_here

SCHEMA = {"type": "object", "properties": {"files": {"type": "integer"}}, "required": ["files"]}


def _think_glob_then_answer(body: dict) -> dict:
    thinking = {"type": "thinking", "thinking": "Count them.", "signature": f"sig-{len(body['messages'])}"}
    last = body["messages"][-1]
    if isinstance(last["content"], list) and any(b.get("type") == "tool_result" for b in last["content"]):
        call = {"type": "tool_use", "id": "toolu_2", "name": "StructuredOutput", "input": {"files": 2}}
        return {"content": [thinking, {"type": "text", "text": "Two files."}, call]}
    return {"content": [thinking, {"type": "tool_use", "id": "toolu_1", "name": "Glob", "input": {"pattern": "*.txt"}}]}


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_thinking_effort_betas_and_a_schema_reach_the_api_and_the_result(tmp_path):
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("x\n")
    with FakeMessagesAPI(replies=[_think_glob_then_answer]) as api:
        done = covey_here("-p", "How many text files?", "--output-format", "json", "--model", "claude-opus-4-5",
                          "--max-thinking-tokens", "2000", "--effort", "high", "--betas", "beta-one",
                          "--json-schema", json.dumps(SCHEMA), cwd=tmp_path,
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "x"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["subtype"] == "success" and result["structured_output"] == {"files": 2}
    # The valid StructuredOutput call ended the run (no third request: two below); as Claude Code's, the pass that
    # took the answer counts as a turn.
    assert result["num_turns"] == 3 and result["result"] == '{"files":2}'
    first, second = api.requests
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert first["output_config"] == {"effort": "high"}
    answer_tool = next(tool for tool in first["tools"] if tool["name"] == "StructuredOutput")
    assert answer_tool["input_schema"] == SCHEMA
    assert any("StructuredOutput" in block["text"] for block in first["system"])
    # The tool-use turn went back with its thinking block first, signature and all (the fake API
    # answers 400 otherwise, as the real one does).
    kept = second["messages"][-2]["content"][0]
    assert kept == {"type": "thinking", "thinking": "Count them.", "signature": f"sig-{len(first['messages'])}"}
    assert api.betas == ["beta-one,effort-2025-11-24"] * 2


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")
def test_a_sub_agent_does_not_think(tmp_path):
    def reply(body: dict) -> dict:
        if body.get("thinking") is None:  # the child: no thinking, so no thinking block
            return {"text": "child done"}
        thinking = {"type": "thinking", "thinking": "Delegate.", "signature": "sig"}
        if any(b.get("type") == "tool_result" for b in body["messages"][-1]["content"] if isinstance(b, dict)):
            return {"content": [thinking, {"type": "text", "text": "all done"}]}
        call = {"type": "tool_use", "id": "toolu_1", "name": "Agent",
                "input": {"description": "look", "prompt": "look around", "subagent_type": "general-purpose"}}
        return {"content": [thinking, call]}

    with FakeMessagesAPI(replies=[reply]) as api:
        done = covey_here("-p", "Delegate it.", "--output-format", "json", "--model", "claude-sonnet-4-5",
                          "--thinking", "enabled", cwd=tmp_path,
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "x"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "all done"
    thinking = [body.get("thinking") for body in api.requests]
    # The main agent thinks with the default budget (below the model's output limit, as the API requires).
    assert thinking.count(None) == 1 and all(t and t["type"] == "enabled" for t in thinking if t is not None)


def test_text_output_prints_the_structured_answer_as_one_json_line(capsys):
    from covey.cli.served import print_result

    assert print_result({"result": "Two files.", "structured_output": {"files": 2}, "is_error": False}, "text") == 0
    assert print_result({"result": "plain", "is_error": False}, "text") == 0
    assert capsys.readouterr().out.splitlines() == ['{"files": 2}', "plain"]


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")
def test_the_budget_stops_the_run_and_its_children_when_it_is_spent(tmp_path):
    """Claude Code's --max-budget-usd: each agent stops at the reply that spent the budget."""
    glob = {"type": "tool_use", "id": "toolu_g", "name": "Glob", "input": {"pattern": "*"}}

    def reply(body: dict) -> dict:
        if "SPEND IT" in json.dumps(body["messages"][-1]):  # the child: one costly reply that calls a tool
            return {"content": [glob], "usage": {"input_tokens": 100_000}}
        if any(b.get("type") == "tool_result" for b in body["messages"][-1]["content"] if isinstance(b, dict)):
            return {"content": [glob]}  # the main agent would go on
        call = {"type": "tool_use", "id": "toolu_a", "name": "Agent",
                "input": {"description": "spend", "prompt": "SPEND IT", "subagent_type": "general-purpose"}}
        return {"content": [call]}

    with FakeMessagesAPI(replies=[reply]) as api:
        done = covey_here("-p", "Go.", "--output-format", "json", "--model", "claude-sonnet-4-5",
                          "--max-budget-usd", "0.01", cwd=tmp_path,
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "x"})
    result = json.loads(done.stdout)
    assert done.returncode == 1 and result["subtype"] == "error_max_budget_usd" and result["is_error"]
    assert "the session budget of $0.01 is spent" in result["result"] and result["total_cost_usd"] >= 0.3
    # The main agent's first reply, the child's one reply (it stopped there, its Glob never ran),
    # then the main agent's reply to the child's report (it stopped there too).
    assert len(api.requests) == 3
    child_report = api.requests[2]["messages"][-1]["content"][0]
    assert child_report["type"] == "tool_result" and "budget" in json.dumps(child_report)


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")
@pytest.mark.parametrize("flag", [True, False])
def test_include_hook_events_streams_each_hook_run(tmp_path, flag):
    (tmp_path / ".claude").mkdir()
    hook = {"matcher": "Glob", "hooks": [{"type": "command", "command": "echo looked"}]}
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))
    glob = {"content": [{"type": "tool_use", "id": "toolu_g", "name": "Glob", "input": {"pattern": "*"}}]}

    def reply(body: dict) -> dict:
        last = body["messages"][-1]["content"]
        return {"text": "done"} if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last) else glob

    with FakeMessagesAPI(replies=[reply]) as api:
        done = covey_here("-p", "Look.", "--output-format", "stream-json", "--verbose",
                          *(["--include-hook-events"] if flag else []), cwd=tmp_path,
                          env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "x"})
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    hooks = [line for line in lines if line.get("subtype") in ("hook_started", "hook_response")]
    if not flag:
        assert hooks == []
        return
    started, response = [h for h in hooks if h["hook_event"] == "PreToolUse"]
    assert (started["subtype"], started["hook_name"]) == ("hook_started", "PreToolUse:Glob")
    assert response["subtype"] == "hook_response" and response["hook_id"] == started["hook_id"]
    assert (response["exit_code"], response["outcome"], response["output"]) == (0, "success", "looked")
    result_at = next(i for i, line in enumerate(lines) if line.get("type") == "user")
    assert lines.index(response) < result_at  # before the call it let run came back


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")
def test_a_background_childs_messages_stream_while_the_main_agents_turn_is_open(tmp_path):
    """As Claude Code prints them: the child's messages, marked with its Agent call, in the turn."""
    launch = {"type": "tool_use", "id": "toolu_bg", "name": "Agent",
              "input": {"description": "bg", "prompt": "SPEAK UP", "subagent_type": "general-purpose",
                        "run_in_background": True}}
    wait = {"type": "tool_use", "id": "toolu_sleep", "name": "Bash", "input": {"command": "sleep 2"}}

    def reply(body: dict) -> dict:
        said = json.dumps(body["messages"])
        if any(m["role"] == "user" and "SPEAK UP" in json.dumps(m["content"]) for m in body["messages"]):
            return {"text": "BG CHILD SPEAKS"}
        if "task-notification" in said:
            return {"text": "all reported"}
        if "toolu_sleep" in said:
            return {"text": "main turn done"}
        return {"content": [launch, wait]}

    with FakeMessagesAPI(replies=[reply]) as api:
        done = covey_here("-p", "Go.", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash",
                          cwd=tmp_path, env={"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "x"})
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    spoke = [i for i, line in enumerate(lines) if line.get("type") == "assistant"
             and line.get("parent_tool_use_id") == "toolu_bg" and "BG CHILD SPEAKS" in json.dumps(line)]
    first_result = next(i for i, line in enumerate(lines) if line.get("type") == "result")
    assert len(spoke) == 1 and spoke[0] < first_result
    assert (lines[spoke[0]]["subagent_type"], lines[spoke[0]]["task_description"]) == ("general-purpose", "bg")
