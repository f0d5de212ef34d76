"""What claude-agent-sdk programs count on from their CLI, checked on covey with the real SDK and
the scripted fake API: the environment's thinking budget, a prompt's ``@file`` and ``verbatim_prompts``,
a call a PreToolUse hook defers and the resumed session that settles it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (AssistantMessage, ClaudeSDKClient, HookMatcher, ResultMessage, StreamEvent, ThinkingBlock,
                              query)

from tests.sdk.conftest import REFERENCE_CLI
from tests.sdk.test_sdk_compat import collect, last_user_text, tool_results, tool_use

pytestmark = pytest.mark.ray  # the covey service runs a Ray


def _thinks(body: dict[str, Any]) -> dict[str, Any]:
    """A reply that thinks when the request asks for thinking, and says so."""
    thinking = body.get("thinking") or {}
    text = {"type": "text", "text": f"thinking was {thinking.get('type')}"}
    if thinking.get("type") != "enabled":
        return {"content": [text]}
    return {"content": [{"type": "thinking", "thinking": "two and two make four", "signature": "sig"}, text]}


async def test_max_thinking_tokens_in_the_programs_env_turns_thinking_on(sdk_options, fake_api):
    fake_api.replies = [_thinks]
    options = sdk_options(model="claude-sonnet-4-5", include_partial_messages=True)
    options.env["MAX_THINKING_TOKENS"] = "8000"
    async with ClaudeSDKClient(options=options) as client:
        await client.query("THINK-1 what is 2 + 2?")
        messages = await collect(client.receive_response())

    [asked] = [body for body in fake_api.requests if "THINK-1" in last_user_text(body)]
    thinking = asked["thinking"]  # (Claude Code 2.1.337 adds a "display" of its own)
    assert (thinking["type"], thinking["budget_tokens"]) == ("enabled", 8000), thinking
    blocks = [block for m in messages if isinstance(m, AssistantMessage) for block in m.content]
    assert any(isinstance(block, ThinkingBlock) and "four" in block.thinking for block in blocks), messages
    deltas = [e.event["delta"] for e in messages if isinstance(e, StreamEvent) and e.event["type"] == "content_block_delta"]
    assert "".join(d.get("thinking", "") for d in deltas) == "two and two make four", deltas


@pytest.mark.parametrize("verbatim", [False, True])
async def test_a_mentioned_file_is_read_for_the_model_unless_the_prompt_is_verbatim(sdk_options, fake_api, tmp_path,
                                                                                    verbatim):
    secret = tmp_path.parent / f"{tmp_path.name}-secret.txt"  # outside the working directory
    secret.write_text("the word is QUINCE\n")
    fake_api.replies = [lambda body: {"text": "QUINCE" if "QUINCE" in json.dumps(body["messages"]) else "UNKNOWN"}]
    options = sdk_options(verbatim_prompts=verbatim, tools=[])
    options.env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "config")
    messages = await collect(query(prompt=f"MENTION-2 which word? @{secret}", options=options))

    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == ("UNKNOWN" if verbatim else "QUINCE"), messages
    [asked] = [body for body in fake_api.requests if "MENTION-2" in last_user_text(body)]
    [record_file] = (tmp_path / "config" / "projects").glob(f"*/{result.session_id}.jsonl")
    records = [json.loads(line) for line in record_file.read_text().splitlines()]
    attached = [r for r in records if r["type"] == "attachment" and r["attachment"]["type"] == "file"]
    if verbatim:
        assert attached == [] and "QUINCE" not in json.dumps(asked["messages"])
        return
    [attachment] = attached
    assert attachment["attachment"]["filename"] == str(secret)
    assert attachment["attachment"]["content"]["file"]["content"] == "the word is QUINCE\n"
    prompt_record = next(r for r in records if r.get("uuid") == attachment["parentUuid"])
    assert "MENTION-2" in json.dumps(prompt_record["message"])
    texts = [text for m in asked["messages"] if m["role"] == "user"  # (Claude Code sends some as strings)
             for text in ([m["content"]] if isinstance(m["content"], str) else [b.get("text", "") for b in m["content"]])]
    call = next(i for i, text in enumerate(texts) if "Called the Read tool" in text)
    assert "1\tthe word is QUINCE" in texts[call + 1], texts  # the call's result, then the prompt as sent
    assert texts.index(f"MENTION-2 which word? @{secret}") > call + 1, texts


def _decides(decision: str, seen: list[tuple[str, str | None]]) -> Any:
    async def hook(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((decision, tool_use_id))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
                                       "permissionDecisionReason": f"{decision} by the program"}}
    return hook


@pytest.mark.skipif(bool(os.environ.get(REFERENCE_CLI)), reason="Claude Code 2.1.337 asks the resumed session's hooks "
                    "again only at times (both seen with this program), and runs the call unchecked once the input ended")
@pytest.mark.parametrize("resume_by", ["client", "query"])
async def test_a_deferred_call_ends_the_run_and_the_resumed_session_asks_its_hooks_again(sdk_options, fake_api,
                                                                                         tmp_path, resume_by):
    ran = tmp_path / "ran.txt"

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if "toolu_defer3" in tool_results(body):
            return {"text": "settled"}
        return tool_use("toolu_defer3", "Bash", {"command": f"echo hi > {ran}", "description": "write"})

    fake_api.replies = [reply]
    seen: list[tuple[str, str | None]] = []

    def options(decision: str, **more: Any) -> Any:
        made = sdk_options(tools=["Bash"], allowed_tools=["Bash"], setting_sources=[], **more,
                           hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[_decides(decision, seen)])]})
        made.env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "config")
        return made

    first = await collect(query(prompt="DEFER-3 write the file", options=options("defer")))
    deferred = first[-1]
    assert isinstance(deferred, ResultMessage) and deferred.stop_reason == "tool_deferred", first
    assert (deferred.is_error, deferred.result) == (False, "")
    assert deferred.deferred_tool_use is not None and deferred.deferred_tool_use.id == "toolu_defer3"
    assert deferred.deferred_tool_use.name == "Bash" and not ran.exists()

    resumed = options("deny", resume=deferred.session_id)
    if resume_by == "client":  # connected, no prompt: the session settles the call on its own
        async with ClaudeSDKClient(options=resumed) as client:
            second = await collect(client.receive_response())
    else:  # a query() whose prompts are none closes its input at once: its hook sees the call, no answer comes back
        async def nothing() -> Any:
            return
            yield

        second = await collect(query(prompt=nothing(), options=resumed))

    result = second[-1]
    assert isinstance(result, ResultMessage) and (result.is_error, result.result) == (False, "settled"), second
    assert seen == [("defer", "toolu_defer3"), ("deny", "toolu_defer3")] and not ran.exists()
    assert result.session_id == deferred.session_id
    [answered] = [body for body in fake_api.requests if "toolu_defer3" in tool_results(body)]
    assert tool_results(answered)["toolu_defer3"]["is_error"] is True
