"""The real claude-agent-sdk, unchanged, against covey (``cli_path`` = the ``covey`` executable).

Each test is a small SDK program: ``query()`` or ``ClaudeSDKClient``, permission callbacks,
hooks, sub-agents, interrupt and resume. covey runs it through its service and the real
anthropic SDK path, against a fake Messages API whose replies are chosen by what each
request holds (a marker in the last user message, tool results, the system prompt), never
by call order: a sub-agent calls the same API while its parent does.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any, AsyncIterator

import pytest
from claude_agent_sdk import (
    AgentDefinition,
    AssistantMessage,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TextBlock,
    ToolPermissionContext,
    query,
)

pytestmark = pytest.mark.ray  # the covey service runs a Ray

RUN_TIMEOUT_S = 45


@pytest.fixture(autouse=True)
def _everything_given_back(served):
    """After each program the service runs no session and has lent nothing: an SDK run
    that ended (or was interrupted) gave every agent back."""
    yield
    served.wait_all_given_back(timeout_s=30)


# -- reading the fake API's requests ------------------------------------------------


def _text(content: Any) -> str:
    """The text of a message's content (tool results' text included)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block["text"])
        elif block.get("type") == "tool_result":
            parts.append(_text(block.get("content")))
    return "\n".join(parts)


def _last_user(body: dict[str, Any]) -> dict[str, Any]:
    return next(m for m in reversed(body["messages"]) if m["role"] == "user")


def last_user_text(body: dict[str, Any]) -> str:
    return _text(_last_user(body)["content"])


def tool_results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The last user message's tool results, by tool_use_id."""
    content = _last_user(body)["content"]
    blocks = content if isinstance(content, list) else []
    return {b["tool_use_id"]: b for b in blocks if b.get("type") == "tool_result"}


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return system if isinstance(system, str) else _text(system)


def said(body: dict[str, Any], role: str, text: str) -> bool:
    """Whether a ``role`` message of the request's conversation contains ``text``."""
    return any(m["role"] == role and text in _text(m["content"]) for m in body["messages"])


def requests_with(api: Any, marker: str) -> list[dict[str, Any]]:
    return [body for body in list(api.requests) if marker in last_user_text(body)]


def tool_use(tool_id: str, name: str, input: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "id": tool_id, "name": name, "input": input}]}


# -- running SDK programs ---------------------------------------------------------------


async def collect(messages: AsyncIterator[Any], timeout_s: float = RUN_TIMEOUT_S) -> list[Any]:
    out: list[Any] = []
    try:
        async with asyncio.timeout(timeout_s):
            async for message in messages:
                out.append(message)
    except TimeoutError:
        pytest.fail(f"no end after {timeout_s} s; got {[type(m).__name__ for m in out]}: {out}")
    return out


async def until(condition: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout_s} s for {what}")
        await asyncio.sleep(0.05)


def of_type(messages: list[Any], cls: type) -> list[Any]:
    return [m for m in messages if isinstance(m, cls)]


def assistant_text(messages: list[Any]) -> str:
    return "\n".join(b.text for m in of_type(messages, AssistantMessage) for b in m.content
                     if isinstance(b, TextBlock))


def with_subtype(messages: list[Any], subtype: str) -> list[SystemMessage]:
    return [m for m in of_type(messages, SystemMessage) if m.subtype == subtype]


# -- the tests ----------------------------------------------------------------------------


async def test_query_streams_init_the_assistant_text_and_a_successful_result(sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": "ok from the fake API" if "say ok" in last_user_text(body) else "?"}]

    messages = await collect(query(prompt="say ok", options=sdk_options()))

    init = with_subtype(messages, "init")
    assert init and messages[0] is init[0], messages
    assert re.fullmatch(r"\d+\.\d+\.\d+", init[0].data["claude_code_version"]), init[0].data
    assert "ok from the fake API" in assistant_text(messages)
    result = messages[-1]
    assert isinstance(result, ResultMessage), messages
    assert (result.subtype, result.is_error, result.result) == ("success", False, "ok from the fake API")
    assert result.session_id == init[0].data["session_id"]
    assert len(of_type(messages, ResultMessage)) == 1
    assert requests_with(fake_api, "say ok"), fake_api.requests


async def test_partial_messages_stream_the_reply_before_it_comes_whole(sdk_options, fake_api):
    fake_api.replies = [lambda body: {"text": "streamed words"}]

    messages = await collect(query(prompt="stream it", options=sdk_options(include_partial_messages=True)))

    streamed = of_type(messages, StreamEvent)
    whole = next(i for i, m in enumerate(messages) if isinstance(m, AssistantMessage))
    assert streamed and all(messages.index(e) < whole for e in streamed), messages
    kinds = [e.event["type"] for e in streamed]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop", kinds
    text = "".join(e.event["delta"].get("text", "") for e in streamed if e.event["type"] == "content_block_delta")
    assert text == "streamed words" and all(e.parent_tool_use_id is None for e in streamed)


async def test_a_client_conversation_continues_over_two_turns(sdk_options, fake_api):
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        asked = last_user_text(body)
        if "SECOND-2" in asked:
            return {"text": "answer two"}
        return {"text": "answer one: PINEAPPLE noted" if "FIRST-2" in asked else "?"}

    fake_api.replies = [reply]
    async with ClaudeSDKClient(options=sdk_options()) as client:
        await client.query("FIRST-2: the word is PINEAPPLE")
        first = await collect(client.receive_response())
        await client.query("SECOND-2: which word did I give you?")
        second = await collect(client.receive_response())

    results = [first[-1], second[-1]]
    assert all(isinstance(r, ResultMessage) for r in results), (first, second)
    assert [r.result for r in results] == ["answer one: PINEAPPLE noted", "answer two"]
    assert results[0].session_id == results[1].session_id
    [turn_two] = requests_with(fake_api, "SECOND-2")
    assert said(turn_two, "user", "FIRST-2: the word is PINEAPPLE"), turn_two["messages"]
    assert said(turn_two, "assistant", "answer one: PINEAPPLE noted"), turn_two["messages"]


async def test_can_use_tool_allows_write_and_denies_bash_with_its_message(sdk_options, fake_api, tmp_path):
    note = tmp_path / "note.txt"
    # Not a read-only command, so no mode or read-only shortcut may let it run unasked.
    command = f"echo hi > {tmp_path / 'bash-ran.txt'}"

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        results = tool_results(body)
        if "toolu_bash3" in results:
            return {"text": "done"}
        if "toolu_write3" in results:
            return tool_use("toolu_bash3", "Bash", {"command": command, "description": "say hi"})
        if "MARK-3" in last_user_text(body):
            return tool_use("toolu_write3", "Write", {"file_path": str(note), "content": "hello\n"})
        return {"text": "?"}

    calls: list[tuple[str, dict[str, Any], ToolPermissionContext]] = []

    async def can_use_tool(tool_name: str, input: dict[str, Any], context: ToolPermissionContext):
        calls.append((tool_name, input, context))
        if tool_name == "Bash":
            return PermissionResultDeny(message="no shell for you")
        return PermissionResultAllow()

    fake_api.replies = [reply]
    options = sdk_options(can_use_tool=can_use_tool, permission_mode="default")
    messages = await collect(query(prompt="MARK-3 write a note, then say hi", options=options))

    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done", messages
    assert note.read_text() == "hello\n"
    assert not (tmp_path / "bash-ran.txt").exists()
    assert [(name, inp) for name, inp, _ in calls] == [
        ("Write", {"file_path": str(note), "content": "hello\n"}),
        ("Bash", {"command": command, "description": "say hi"}),
    ]
    contexts = [context for _, _, context in calls]
    assert [c.tool_use_id for c in contexts] == ["toolu_write3", "toolu_bash3"], contexts
    assert all(c.agent_id is None for c in contexts), contexts  # the main agent asked, not a sub-agent
    [after_bash] = [b for b in fake_api.requests if "toolu_bash3" in tool_results(b)]
    bash_result = tool_results(after_bash)["toolu_bash3"]
    assert bash_result.get("is_error") is True and "no shell for you" in _text(bash_result.get("content")), bash_result
    [after_write] = [b for b in fake_api.requests if "toolu_write3" in tool_results(b)]
    assert not tool_results(after_write)["toolu_write3"].get("is_error")


async def test_a_pre_tool_use_hook_callback_denies_a_write(sdk_options, fake_api, tmp_path):
    blocked = tmp_path / "blocked.txt"

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if "toolu_write4" in tool_results(body):
            return {"text": "could not write"}
        if "MARK-4" in last_user_text(body):
            return tool_use("toolu_write4", "Write", {"file_path": str(blocked), "content": "nope\n"})
        return {"text": "?"}

    seen: list[tuple[dict[str, Any], str | None]] = []

    async def pre_tool_use(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((input_data, tool_use_id))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "no writes"}}

    fake_api.replies = [reply]
    # acceptEdits would let this write in the project run unasked: only the hook stops it.
    options = sdk_options(permission_mode="acceptEdits",
                          hooks={"PreToolUse": [HookMatcher(matcher="Write", hooks=[pre_tool_use])]})
    messages = await collect(query(prompt="MARK-4 write a file", options=options))

    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "could not write", messages
    assert not blocked.exists()
    [(input_data, tool_use_id)] = seen
    assert (input_data["hook_event_name"], input_data["tool_name"]) == ("PreToolUse", "Write"), input_data
    assert input_data["tool_input"] == {"file_path": str(blocked), "content": "nope\n"}
    assert input_data["tool_use_id"] == tool_use_id == "toolu_write4"
    assert input_data["cwd"] == str(tmp_path) and input_data["session_id"] == messages[-1].session_id
    [after] = [b for b in fake_api.requests if "toolu_write4" in tool_results(b)]
    result = tool_results(after)["toolu_write4"]
    assert result.get("is_error") is True and "no writes" in _text(result.get("content")), result


async def test_a_background_sub_agent_from_sdk_agents_runs_and_notifies_its_parent(sdk_options, fake_api):
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if "HELPER-PROMPT-5" in system_text(body):
            return {"text": "helper found FIG"}
        if "task-notification" in last_user_text(body):
            return {"text": "FINAL-5: the helper found FIG"}
        if "toolu_agent5" in tool_results(body):
            return {"text": "the helper is on it"}
        if "MARK-5" in last_user_text(body):
            return tool_use("toolu_agent5", "Agent", {
                "description": "look up the fruit", "prompt": "CHILD-TASK-5: find the fruit",
                "subagent_type": "helper", "run_in_background": True})
        return {"text": "?"}

    fake_api.replies = [reply]
    helper = AgentDefinition(description="Looks things up", prompt="You are HELPER-PROMPT-5.", tools=["Read"])
    options = sdk_options(agents={"helper": helper})
    messages = await collect(query(prompt="MARK-5 ask the helper in the background", options=options))

    started = with_subtype(messages, "task_started")
    assert started and all(isinstance(m, TaskStartedMessage) for m in started), messages
    task = started[0]
    assert task.tool_use_id == "toolu_agent5" and task.task_type == "local_agent", task.data
    notified = [m for m in of_type(messages, TaskNotificationMessage) if m.task_id == task.task_id]
    assert notified and notified[0].status == "completed", messages
    assert messages.index(task) < messages.index(notified[0])

    results = of_type(messages, ResultMessage)
    assert messages[-1] is results[-1] and results[-1].result == "FINAL-5: the helper found FIG", results
    assert messages.index(notified[0]) < messages.index(results[-1])
    assert all(r.session_id == task.session_id for r in results)
    assert all("helper found FIG" != r.result for r in results)  # no result of the child's own

    [child] = [b for b in fake_api.requests if "HELPER-PROMPT-5" in system_text(b)]
    assert "CHILD-TASK-5: find the fruit" in last_user_text(child)
    assert {tool["name"] for tool in child.get("tools", [])} == {"Read"}
    [follow_up] = [b for b in fake_api.requests if "task-notification" in last_user_text(b)]
    assert "helper found FIG" in last_user_text(follow_up)


async def test_interrupt_ends_a_slow_turn_at_once_and_the_client_goes_on(sdk_options, fake_api):
    delay_s = 8.0

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        asked = last_user_text(body)
        if "SLOW-6" in asked and "AFTER-6" not in asked:
            time.sleep(delay_s)
            return {"text": "slow answer"}
        return {"text": "after the interrupt" if "AFTER-6" in asked else "?"}

    fake_api.replies = [reply]
    # The slow reply is written to the socket the interrupted run closed: not worth a traceback.
    fake_api._server.handle_error = lambda request, address: None
    async with ClaudeSDKClient(options=sdk_options()) as client:
        asked_at = time.monotonic()
        await client.query("SLOW-6 take your time")
        response = client.receive_response()
        first = await asyncio.wait_for(anext(response), RUN_TIMEOUT_S)
        await until(lambda: requests_with(fake_api, "SLOW-6"), 10, "the slow request to reach the fake API")
        interrupted_at = time.monotonic()
        await client.interrupt()
        rest = await collect(response, timeout_s=RUN_TIMEOUT_S)
        ended_in_s = time.monotonic() - interrupted_at

        assert isinstance(rest[-1], ResultMessage), [first, *rest]
        assert ended_in_s < 4 and time.monotonic() - asked_at < delay_s, (ended_in_s, rest)
        assert "slow answer" not in assistant_text(rest) and rest[-1].result != "slow answer"
        await client.query("AFTER-6 are you still there?")
        after = await collect(client.receive_response())
    assert isinstance(after[-1], ResultMessage) and after[-1].result == "after the interrupt", after
    assert after[-1].session_id == rest[-1].session_id and not after[-1].is_error


async def test_resume_continues_a_finished_session_in_a_new_process(sdk_options, fake_api):
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        asked = last_user_text(body)
        if "RECALL-7" in asked:
            return {"text": "it was MANGO"}
        return {"text": "noted: MANGO" if "REMEMBER-7" in asked else "?"}

    fake_api.replies = [reply]
    first = await collect(query(prompt="REMEMBER-7 the word is MANGO", options=sdk_options()))
    assert isinstance(first[-1], ResultMessage) and first[-1].result == "noted: MANGO", first
    session_id = first[-1].session_id

    second = await collect(query(prompt="RECALL-7 what was the word?", options=sdk_options(resume=session_id)))

    assert isinstance(second[-1], ResultMessage) and second[-1].result == "it was MANGO", second
    assert second[-1].session_id == session_id  # resume without fork_session keeps the session
    [recall] = requests_with(fake_api, "RECALL-7")
    assert said(recall, "user", "REMEMBER-7 the word is MANGO"), json.dumps(recall["messages"])[:2000]
    assert said(recall, "assistant", "noted: MANGO"), json.dumps(recall["messages"])[:2000]


def test_covey_continue_p_continues_the_last_conversation_of_the_directory(served, fake_api, tmp_path):
    """Not the SDK: the same service and fake API, through ``covey -p`` and ``covey --continue -p``."""
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return {"text": "then step two" if "and then?" in last_user_text(body) else "PLAN-8: step one"}

    fake_api.replies = [reply]
    env = {"COVEY_NO_SERVICE": "0", "ANTHROPIC_BASE_URL": fake_api.url}
    first = served.covey("-p", "make a plan", "--quiet", env=env, cwd=tmp_path)
    assert (first.returncode, first.stdout) == (0, "PLAN-8: step one\n"), first.stderr
    again = served.covey("--continue", "-p", "and then?", "--output-format", "json", env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["result"] == "then step two"
    [later] = requests_with(fake_api, "and then?")
    assert said(later, "user", "make a plan") and said(later, "assistant", "PLAN-8: step one")
    (elsewhere_dir := tmp_path / "elsewhere").mkdir()  # a directory no conversation ran in
    elsewhere = served.covey("--continue", "-p", "and then?", env=env, cwd=elsewhere_dir)
    assert elsewhere.returncode == 1 and "No conversation found to continue" in elsewhere.stderr
