"""Automatic compaction in the loop (docs/compaction.md), without Ray: the threshold, the summary
request, what replaces the conversation, the hooks' say, and the boundary event."""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from covey.errors import ModelAPIError
from covey.events import CompactBoundary, ResultEvent
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.loop.compact import MAX_FAILURES, CompactLimits, Compactor, compact_limits
from covey.model.limits import LimitTable
from covey.model.messages import Message
from covey.model.scripted import ScriptedModel
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult

SYSTEM = [{"type": "text", "text": "you are a test agent"}]


class EchoInput(ToolInput):
    text: str


class Echo(Tool):
    name: ClassVar[str] = "Echo"
    description: ClassVar[str] = "echoes"
    input_model = EchoInput
    read_only = True

    async def run(self, input, ctx):
        return ToolResult(content=f"echo: {input.text}")


def _reply(content, input_tokens, stop="end_turn"):
    return Message.model_validate({
        "id": "msg_x", "type": "message", "role": "assistant", "model": "m", "content": content,
        "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": input_tokens, "output_tokens": 10},
    })


def _call(text, tokens):
    return _reply([{"type": "tool_use", "id": f"toolu_{text}", "name": "Echo", "input": {"text": text}}], tokens, "tool_use")


def _text(text, tokens=100):
    return _reply([{"type": "text", "text": text}], tokens)


SUMMARY = _text("<analysis>private notes</analysis>\n<summary>\nThe user wants echoes.\n</summary>")


def _loop(turns, compactor, *, ctx=None):
    ctx = ctx or ToolContext(agent_id="agent-test", cwd=Path("."))
    return AgentLoop(model=ScriptedModel.from_turns(turns), executor=ToolExecutor([Echo()], ctx),
                     config=LoopConfig(model_id="m", system=SYSTEM, max_turns=10), compactor=compactor)


async def _run(loop, prompt="echo things"):
    return [event async for event in loop.run([{"role": "user", "content": prompt}])]


def _compactor(threshold=1_000, **extra):
    return Compactor(CompactLimits(window=10_000, reserve=500, threshold=threshold), **extra)


def _texts(message):
    content = message["content"]
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content if b.get("type") == "text"]


# -- the threshold ---------------------------------------------------------------


def test_the_threshold_is_claude_codes_on_a_200k_model():
    limits = compact_limits("claude-sonnet-4-6", LimitTable.load(), {})
    # 200,000 less 20,000 for the summary is the effective window; compaction 13,000 short of it.
    assert (limits.window, limits.reserve, limits.threshold) == (200_000, 20_000, 167_000)
    assert compact_limits("claude-sonnet-4-6[1m]", LimitTable.load(), {}).threshold == 967_000


def test_the_percent_override_can_only_lower_it():
    table = LimitTable.load()
    assert compact_limits("claude-sonnet-4-6", table, {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}).threshold == 90_000
    assert compact_limits("claude-sonnet-4-6", table, {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "95"}).threshold == 167_000
    assert compact_limits("claude-sonnet-4-6", table, {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "x"}).threshold == 167_000


def test_it_can_be_turned_off_by_env_or_setting():
    table = LimitTable.load()
    assert compact_limits("claude-sonnet-4-6", table, {"DISABLE_AUTO_COMPACT": "1"}).threshold is None
    assert compact_limits("claude-sonnet-4-6", table, {"DISABLE_COMPACT": "true"}).threshold is None
    assert compact_limits("claude-sonnet-4-6", table, {}, enabled=False).threshold is None


def test_a_small_window_still_leaves_room_to_work():
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "20000"}
    limits = compact_limits("claude-sonnet-4-6", LimitTable.load(env=env), env)
    # reserve: a quarter of the window; margin: a tenth of what is left.
    assert (limits.window, limits.reserve, limits.threshold) == (20_000, 5_000, 13_500)


# -- one compaction ----------------------------------------------------------------


async def test_nearing_the_threshold_summarises_and_goes_on_from_the_summary():
    calls = []

    async def before(trigger):
        calls.append(trigger)
        return False, "Keep every echoed word."

    loop = _loop([_call("a", 400), _call("b", 2_000), SUMMARY, _text("done")], _compactor(before=before))
    events = await _run(loop)
    requests = loop.model.requests
    assert calls == ["auto"]  # PreCompact, with trigger auto, once
    boundary = next(e for e in events if isinstance(e, CompactBoundary))
    # Compaction comes before the request that would have gone over, after the tool results.
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("CompactBoundary") == len(kinds) - 3
    wire = boundary.wire()
    assert wire["type"] == "system" and wire["subtype"] == "compact_boundary"
    assert wire["compact_metadata"]["trigger"] == "auto" and wire["compact_metadata"]["pre_tokens"] >= 2_010
    assert set(wire) == {"type", "subtype", "session_id", "uuid", "compact_metadata", "written_at"}
    # The summary request: the same system and tools, the conversation, the request appended to its last message.
    summary_request = requests[2]
    assert summary_request.system == requests[1].system and summary_request.tools == requests[1].tools
    assert summary_request.max_tokens == 500
    sent = summary_request.messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[0]["content"] == "echo things" and sent[3]["content"][0]["id"] == "toolu_b"
    assert sent[-1]["content"][0]["tool_use_id"] == "toolu_b"  # the last results, then the request
    asked = _texts(sent[-1])[-1]
    for section in ("Primary Request and Intent", "Files and Code Sections", "Pending Tasks", "Current Work",
                    "<analysis>", "<summary>", "Keep every echoed word."):
        assert section in asked
    # Afterwards the conversation is the summary (analysis dropped), and it goes on from there.
    after = requests[3].messages
    assert len(after) == 1 and after[0]["role"] == "user"
    text = _texts(after[0])[0]
    assert "The user wants echoes." in text and "private notes" not in text and "without asking" in text
    assert isinstance(events[-1], ResultEvent) and events[-1].result == "done"
    assert loop.stats.usage.input_tokens == 400 + 2_000 + 100 + 100  # the summary's tokens count


async def test_a_pre_compact_hook_that_blocks_keeps_the_conversation():
    async def before(trigger):
        return True, None

    loop = _loop([_call("a", 5_000), _text("done")], _compactor(before=before))
    events = await _run(loop)
    assert not any(isinstance(e, CompactBoundary) for e in events)
    assert len(loop.model.requests) == 2 and events[-1].result == "done"


async def test_a_failed_summary_leaves_the_conversation_and_stops_trying_after_three():
    compactor = _compactor()
    turns = [_call("a", 5_000)]
    for word in "bcd":
        turns += [ModelAPIError("overloaded", status_code=529), _call(word, 5_000)]
    loop = _loop([*turns, _text("done")], compactor)
    events = await _run(loop)
    assert compactor.failures == MAX_FAILURES and not any(isinstance(e, CompactBoundary) for e in events)
    assert events[-1].result == "done"  # no fourth try: the breaker is open


async def test_what_comes_back_the_project_context_files_read_and_session_start_context(tmp_path):
    files = [tmp_path / f"f{i}.txt" for i in range(7)]
    for i, path in enumerate(files):
        path.write_text(f"line of file {i}\n" if i != 3 else "x" * 30_000)
        os.utime(path, (1_000 + i, 1_000 + i))
    os.utime(files[0], (2_000, 2_000))  # changed last: first back
    files[6].unlink()  # read, then deleted: nothing to show
    ctx = ToolContext(agent_id="agent-test", cwd=tmp_path)
    ctx.read_files.update({str(path): 1.0 for path in files})

    async def after(trigger, summary):
        assert (trigger, summary) == ("auto", "The user wants echoes.")
        return "remember the deploy freeze"

    prelude = [{"role": "user", "content": [{"type": "text", "text": "CLAUDE.md: use tabs"}]}]
    compactor = _compactor(after=after, read_files=ctx.read_files, context=prelude)
    loop = _loop([_call("a", 5_000), SUMMARY, _text("done")], compactor, ctx=ctx)
    events = await _run(loop)
    after_messages = loop.model.requests[2].messages
    assert _texts(after_messages[0]) == ["CLAUDE.md: use tabs"]  # the project context first, as at the start
    texts = _texts(after_messages[1])
    assert "The user wants echoes." in texts[0]
    shown = [t for t in texts if "read before the conversation was compacted" in t]
    # At most five, the most recently modified first; one too long comes back as its path only.
    assert [next(f"f{i}.txt" for i in range(7) if f"f{i}.txt" in t) for t in shown] == [
        "f0.txt", "f5.txt", "f4.txt", "f3.txt", "f2.txt"]
    assert "     1\tline of file 0" in shown[0] and "too long to show" in shown[3] and "xxx" not in shown[3]
    assert "SessionStart hook additional context: remember the deploy freeze" in texts[-1]
    # A file not shown again must be read again before it is changed.
    assert set(ctx.read_files) == {str(files[i]) for i in (0, 5, 4, 2)}
    boundary = next(e for e in events if isinstance(e, CompactBoundary))
    assert boundary.context == prelude and boundary.summary["content"][0]["text"] == texts[0]
    assert len(boundary.attachments) == 6


async def test_a_forks_inherited_prefix_goes_with_the_rest():
    loop = _loop([_call("a", 5_000), SUMMARY, _text("done")], _compactor())
    loop.config.inherited = 1
    await _run(loop)
    assert loop.config.inherited == 0


async def test_without_a_compactor_or_below_the_threshold_nothing_happens():
    loop = _loop([_call("a", 500), _text("done")], _compactor(threshold=100_000))
    assert not any(isinstance(e, CompactBoundary) for e in await _run(loop))
    loop = _loop([_call("a", 500_000), _text("done")], None)
    assert not any(isinstance(e, CompactBoundary) for e in await _run(loop))
