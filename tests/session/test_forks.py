"""Fork children end to end through a Session, agents in Ray actors, requests over HTTP to the fake
Messages API with its prompt-cache model (docs/subagents.md#fork-children)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path

import pytest

from covey.events import TaskNotification
from covey.session import Session
from covey.subagents.fork import FORK_REFUSAL
from tests.session.scripts import rule
from tests.session.served import model_for, served

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors

TAG = "<fork-boilerplate>"
MAIN = {"system_contains": "You are covey", "messages_lack": TAG}


def fork_call(prompt: str) -> dict:
    return {"name": "Agent", "input": {"description": prompt.lower()[:20], "prompt": prompt}}


def _fork(marker: str) -> dict:
    return {"messages_contain": [TAG, marker]}


async def _run(tmp_path: Path, api, **options):
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    session = Session(cwd=str(project), model=model_for(api), transcript_dir=str(tmp_path / "t"), pool_size=2,
                      max_turns=12, **options)
    try:
        result = await asyncio.wait_for(session.run("PARENT_TASK"), 180)
        records = {r.agent_id: r for r in await session.runtime.registry.records()}
        return result, records
    finally:
        session.close()


def _first_fork_requests(api) -> list[dict]:
    """Each fork's first request (the one whose last message is its directive), in the order served."""
    return [entry for entry in api.cache.log if TAG in json.dumps(entry["body"]["messages"][-1])]


def _prefix(body: dict) -> tuple[str, int]:
    """What a fork shares with its siblings: tools, system and the messages before its directive."""
    directive = next(i for i, m in enumerate(body["messages"]) if TAG in json.dumps(m))
    return json.dumps([body["tools"], body["system"], body["messages"][:directive]], separators=(",", ":")), directive


async def test_five_forks_share_one_prefix_byte_for_byte_and_read_it_from_the_cache(tmp_path):
    with served(
        *[rule(_fork(f"PART_{i}"), {"text": f"PART_{i} finished"}) for i in range(5)],
        rule({**MAIN, "last_message_contains": "<task-notification>"}, {"text": "collected"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": [fork_call(f"PART_{i}") for i in range(5)]}),
        prompt_cache=True,
    ) as api:
        result, records = await _run(tmp_path, api, env={**os.environ, "COVEY_FORK_SUBAGENT": "1"})
    assert not result.is_error, result.result
    firsts = _first_fork_requests(api)
    assert len(firsts) == 5
    prefixes = [_prefix(entry["body"]) for entry in firsts]
    hashes = [hashlib.sha256(prefix.encode()).hexdigest()[:16] for prefix, _ in prefixes]
    print("fork prefix hashes:", hashes)
    assert len(set(hashes)) == 1
    main_tools = next(b for b in api.requests if TAG not in json.dumps(b["messages"]))["tools"]
    assert firsts[0]["body"]["tools"] == main_tools  # the parent's array, the Agent tool kept
    agent = next(t for t in main_tools if t["name"] == "Agent")
    assert "run_in_background" not in agent["input_schema"]["properties"] and "is a fork of you" in agent["description"]
    for entry, (_, directive) in zip(firsts, prefixes):
        marks = entry["breakpoints"]
        assert marks[2]["where"] == f"messages[{directive - 1}].user"  # the breakpoint ends the inherited prefix
        print("fork usage:", entry["usage"])
    # The five Agent calls were all the parent said: its own request wrote that prefix, so every
    # fork reads all of it, and writes only its directive.
    assert all(entry["usage"]["cache_read_input_tokens"] == entry["breakpoints"][2]["tokens"] for entry in firsts)
    forks = [r for r in records.values() if r.agent_type == "fork"]
    assert len(forks) == 5 and all(r.status == "completed" and r.background for r in forks)
    assert all(r.usage.cache_read_input_tokens > 0 for r in forks)  # in the cost figures of each
    assert len([e for e in result.events if isinstance(e, TaskNotification)]) == 5


async def test_a_fork_cannot_fork_its_prompt_reaches_the_root_and_a_named_child_runs_in_the_background(tmp_path):
    asked = []

    def on_permission(request):
        asked.append((request.tool_name, request.subject))
        return True

    with served(
        rule({**_fork("FORK_AGAIN"), "last_tool_result_contains": "Fork is not available"}, {"text": "REFUSED_AS_EXPECTED"}),
        rule(_fork("FORK_AGAIN"), {"tool_use": fork_call("GRANDCHILD")}),
        rule({**_fork("BASH_TASK"), "last_tool_result_contains": "(no output)"}, {"text": "BASH_RAN"}),
        rule(_fork("BASH_TASK"), {"tool_use": {"name": "Bash", "input": {"command": "rm -f does-not-exist"}}}),
        rule({"system_lacks": "You are covey"}, {"text": "NAMED_DONE"}),
        rule({**MAIN, "last_message_contains": "<task-notification>"}, {"text": "collected"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": [fork_call("FORK_AGAIN"), fork_call("BASH_TASK"),
                                 {"name": "Agent", "input": {"description": "named", "prompt": "NAMED_TASK",
                                                             "subagent_type": "general-purpose"}}]}),
        prompt_cache=True,
    ) as api:
        result, records = await _run(tmp_path, api, settings={"forkSubagent": True}, on_permission=on_permission)
    assert not result.is_error, result.result
    refusals = [b for body in api.requests for m in body["messages"] if isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_result" and FORK_REFUSAL in json.dumps(b)]
    assert refusals and refusals[0]["is_error"]
    assert not any("GRANDCHILD" in json.dumps(b["messages"][-1]) for b in api.requests if TAG in json.dumps(b["messages"]))
    assert asked == [("Bash", "rm -f does-not-exist")]  # the fork's prompt came up to the session
    reports = {n.summary for n in result.events if isinstance(n, TaskNotification)}
    assert {"REFUSED_AS_EXPECTED", "BASH_RAN", "NAMED_DONE"} <= reports
    children = sorted((r.agent_type, r.background) for r in records.values() if r.role == "subagent")
    # forking on: every spawn is async, the named one too (run_in_background left the schema)
    assert children == [("fork", True), ("fork", True), ("general-purpose", True)]
