"""A conversation: several turns of one Session, a later process continuing it, an interrupted
turn, and claude-agent-sdk hook callbacks (issue 14)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from covey.errors import UserError
from covey.events import AssistantEvent, ResultEvent, SystemInit
from covey.session import Session
from covey.transcripts.resume import ResumeError
from covey.transcripts.session_files import project_folder
from covey.transcripts.transcript import read_transcript, transcript_path
from tests.session.scripts import CHILD, MAIN, agent_call, rule, scripted
from tests.fake_messages_api import FakeMessagesAPI
from tests.session.served import model_for, served

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors


RULES = (
    rule({**MAIN, "last_message_contains": "SECOND"}, {"text": "second answer"}),
    rule(MAIN, {"text": "FIRST_ANSWER"}),
)
"""The main agent answers "FIRST_ANSWER", and "second answer" to a question marked SECOND."""


def _said(body: dict[str, Any]) -> str:
    return str(body["messages"])


def _session(tmp_path: Path, model: Any, **options: Any) -> Session:
    (tmp_path / "proj").mkdir(exist_ok=True)
    return Session(cwd=str(tmp_path / "proj"), model=model, transcript_dir=str(tmp_path / "t"), pool_size=2,
                   **options)


async def _turn(session: Session, prompt: str | None) -> list[Any]:
    return [event async for event in session.stream(prompt)]


async def test_each_turn_continues_the_conversation_and_reports_on_its_own(tmp_path):
    with served(*RULES) as api:
        session = _session(tmp_path, model_for(api))
        try:
            first = await asyncio.wait_for(_turn(session, "FIRST question"), 60)
            second = await asyncio.wait_for(_turn(session, "SECOND question"), 60)
        finally:
            session.close()
    for events in (first, second):
        assert isinstance(events[0], SystemInit)  # every turn is announced, as Claude Code does
        results = [e for e in events if isinstance(e, ResultEvent)]
        assert len(results) == 1 and results[0].num_turns == 1
    assert [e.result for e in (first[-1], second[-1])] == ["FIRST_ANSWER", "second answer"]
    assert first[-1].session_id == second[-1].session_id == session.session_id
    # The second request holds the whole first exchange, then the new question.
    later = _said(api.requests[-1])
    assert later.index("FIRST question") < later.index("FIRST_ANSWER") < later.index("SECOND question")
    # One transcript for the main agent over both turns, one unbroken uuid chain.
    path = transcript_path(project_folder(tmp_path / "t", session.cwd), session.session_id, session.main_agent_id,
                           main=True)
    records = list(read_transcript(path))
    assert [r["parentUuid"] for r in records[1:]] == [r["uuid"] for r in records[:-1]]
    assert "SECOND question" in str(records[-2]["message"])


async def test_a_new_session_continues_the_last_one_in_its_directory_or_the_one_named(tmp_path):
    first_session = _session(tmp_path, scripted(*RULES))
    try:
        await asyncio.wait_for(_turn(first_session, "FIRST question"), 60)
    finally:
        first_session.close()
    for how in ({"continue_conversation": True}, {"resume": first_session.session_id}):
        with served(*RULES) as api:
            again = _session(tmp_path, model_for(api), **how)
            try:
                events = await asyncio.wait_for(_turn(again, "SECOND question"), 60)
            finally:
                again.close()
        assert again.session_id == first_session.session_id
        assert events[-1].result == "second answer"
        assert "FIRST_ANSWER" in _said(api.requests[0])


async def test_a_fork_continues_the_conversation_under_a_new_id(tmp_path):
    first_session = _session(tmp_path, scripted(*RULES))
    try:
        await asyncio.wait_for(_turn(first_session, "FIRST question"), 60)
    finally:
        first_session.close()
    with served(*RULES) as api:
        fork = _session(tmp_path, model_for(api), resume=first_session.session_id, fork_session=True)
        try:
            events = await asyncio.wait_for(_turn(fork, "SECOND question"), 60)
        finally:
            fork.close()
    assert fork.session_id != first_session.session_id and events[-1].session_id == fork.session_id
    assert "FIRST_ANSWER" in _said(api.requests[0])


def test_resuming_a_session_that_does_not_exist_is_refused_before_anything_starts(tmp_path):
    with pytest.raises(ResumeError, match="00000000-0000-4000-8000-000000000000"):
        _session(tmp_path, scripted(rule(MAIN, {"text": "x"})), resume="00000000-0000-4000-8000-000000000000")


async def test_an_interrupt_ends_the_turn_with_an_error_result_and_the_next_turn_runs(tmp_path):
    release = threading.Event()  # the first request is answered only at the test's end (never in time)

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if len(api.requests) == 1:
            release.wait(60)
            return {"text": "too late"}
        return {"text": "quick answer"}

    with FakeMessagesAPI(replies=[answer]) as api:
        session = _session(tmp_path, model_for(api))
        try:
            events: list[Any] = []

            async def first_turn() -> None:
                async for event in session.stream("SLOW question"):
                    events.append(event)

            turn = asyncio.create_task(first_turn())
            deadline = asyncio.get_running_loop().time() + 60
            while not api.requests:  # the model request is in flight
                assert asyncio.get_running_loop().time() < deadline and not turn.done()
                await asyncio.sleep(0.02)
            assert await session.interrupt()
            await asyncio.wait_for(turn, 20)  # long before the reply
            result = events[-1]
            assert isinstance(result, ResultEvent) and result.is_error and result.result == "[Request interrupted by user]"
            assert result.wire()["terminal_reason"] == "aborted_streaming"  # as Claude Code's
            # Claude Code 2.1.337 says it in a user message before that result.
            assert events[-2].wire()["message"] == {"role": "user", "content": [
                {"type": "text", "text": "[Request interrupted by user]"}]}
            assert not any(isinstance(e, AssistantEvent) for e in events)
            after = await asyncio.wait_for(_turn(session, "next"), 60)
            assert after[-1].result == "quick answer"
        finally:
            release.set()
            session.close()


async def test_an_interrupt_while_a_tool_runs_ends_the_turn_as_aborted_tools(tmp_path):
    """Claude Code's ``terminal_reason`` tells what the interrupt stopped: ``aborted_tools`` while a
    tool call runs (here a Bash command), ``aborted_streaming`` while the model's reply comes (above)."""
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if len(api.requests) == 1:
            return {"content": [{"type": "tool_use", "id": "toolu_wait", "name": "Bash",
                                 "input": {"command": "sleep 30", "description": "wait"}}]}
        return {"text": "quick answer"}

    with FakeMessagesAPI(replies=[answer]) as api:
        session = _session(tmp_path, model_for(api), permission_mode="bypassPermissions")
        try:
            events: list[Any] = []

            async def first_turn() -> None:
                async for event in session.stream("run it"):
                    events.append(event)

            turn = asyncio.create_task(first_turn())
            deadline = asyncio.get_running_loop().time() + 60
            while not any(isinstance(e, AssistantEvent) for e in events):  # the call was made: Bash runs
                assert asyncio.get_running_loop().time() < deadline and not turn.done()
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.5)
            assert await session.interrupt()
            await asyncio.wait_for(turn, 20)  # long before the command's end
            result = events[-1]
            assert isinstance(result, ResultEvent) and result.is_error and result.result == "[Request interrupted by user]"
            assert result.wire()["terminal_reason"] == "aborted_tools"
            after = await asyncio.wait_for(_turn(session, "next"), 60)
            assert after[-1].result == "quick answer" and after[-1].wire()["terminal_reason"] == "completed"
        finally:
            session.close()


async def test_a_notice_or_message_turn_needs_an_earlier_turn(tmp_path):
    session = _session(tmp_path, scripted(rule(MAIN, {"text": "x"})))
    try:
        with pytest.raises(UserError, match="first turn"):
            await _turn(session, None)
    finally:
        session.close()


async def test_an_sdk_hook_callback_sees_the_call_and_its_deny_stops_it(tmp_path):
    target = tmp_path / "proj" / "out.txt"
    model = scripted(
        rule({**MAIN, "last_tool_result_contains": "no writes"}, {"text": "WRITE_REFUSED"}),
        rule(MAIN, {"tool_use": [{"name": "Write", "input": {"file_path": str(target), "content": "x"}}]}),
    )
    calls: list[tuple[str, dict[str, Any], str | None]] = []

    async def on_hook_callback(callback_id: str, payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        calls.append((callback_id, payload, tool_use_id))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "no writes"}}

    session = _session(tmp_path, model, permission_mode="bypassPermissions", on_hook_callback=on_hook_callback,
                       sdk_hooks={"PreToolUse": [{"matcher": "Write", "hookCallbackIds": ["hook_0"]}]})
    try:
        events = await asyncio.wait_for(_turn(session, "write it"), 60)
    finally:
        session.close()
    assert events[-1].result == "WRITE_REFUSED"
    assert not target.exists()
    [(callback_id, payload, tool_use_id)] = calls
    assert callback_id == "hook_0" and payload["tool_name"] == "Write" and payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_input"]["file_path"] == str(target) and tool_use_id


async def test_a_sub_agents_tool_calls_reach_the_sdk_hooks_too(tmp_path):
    model = scripted(
        rule(CHILD, {"tool_use": [{"name": "Glob", "input": {"pattern": "*.nothing"}}]}, times=1),
        rule(CHILD, {"text": "CHILD_DONE"}),
        rule({**MAIN, "last_tool_result_contains": "CHILD_DONE"}, {"text": "MAIN_DONE"}),
        rule(MAIN, {"tool_use": agent_call("look around")}),
    )
    calls: list[dict[str, Any]] = []

    async def on_hook_callback(callback_id: str, payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        calls.append(payload)
        return {}

    session = _session(tmp_path, model, on_hook_callback=on_hook_callback,
                       sdk_hooks={"PreToolUse": [{"matcher": "Glob", "hookCallbackIds": ["hook_glob"]}]})
    try:
        events = await asyncio.wait_for(_turn(session, "delegate"), 60)
    finally:
        session.close()
    assert events[-1].result == "MAIN_DONE"
    [call] = calls  # the child's Glob, asked of the SDK through the session's root
    assert call["tool_name"] == "Glob" and call["agent_id"] not in (None, session.main_agent_id)
