"""A long conversation on a small window completes, compacting as it goes (issue 17's "done means"):
``run_agent`` without Ray, the scripted model, command hooks, the transcript it leaves."""

from __future__ import annotations

import json
import os

from covey.agent.lifecycle import AgentServices, run_agent
from covey.agent.progress import Progress
from covey.definitions.definition import AgentDefinition
from covey.events import CompactBoundary, ResultEvent
from covey.model.pricing import PriceTable
from covey.model.scripted import ScriptedModel
from covey.runtime.spec import AgentSpec, RunSettings
from covey.transcripts.transcript import TranscriptWriter, agent_transcript, rebuild_history
from tests.hooks.scripts import py_hook

TURNS = 60
SUMMARY_ASK = "Primary Request and Intent"


def _model() -> ScriptedModel:
    """Summaries when asked for one; else reads of the notes, 59 times; then an answer."""
    return ScriptedModel.from_dict({"rules": [
        {"when": {"last_message_contains": SUMMARY_ASK},
         "reply": {"text": "<analysis>went through it</analysis><summary>Reading notes.txt again and again.</summary>"}},
        {"times": TURNS - 1, "reply": {"tool_use": {"name": "Read", "input": {"file_path": "notes.txt"}}}},
        {"reply": {"text": "All read."}},
    ]})


def _spec(tmp_path, settings: RunSettings) -> AgentSpec:
    (tmp_path / "notes.txt").write_text("".join(f"note {i}: something worth remembering\n" for i in range(60)))
    return AgentSpec(
        session_id="s-compact", agent_id="a-main", definition=AgentDefinition(name="main", description="main"),
        prompt="read notes.txt over and over", model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=["Read"],
        max_turns=TURNS + 5, transcript_dir=str(tmp_path / "t"), settings=settings,
    )


def _hooks(tmp_path):
    saw = tmp_path / "pre-compact.jsonl"
    pre = py_hook(tmp_path, "pre", f"open({str(saw)!r}, 'a').write(sys.stdin.read().strip() + '\\n')\n"
                                   "print('Keep the note numbers.')\n")
    start = py_hook(tmp_path, "start", "print('After compaction: the notes are in notes.txt.')\n")
    post = py_hook(tmp_path, "post", f"open({str(saw)!r}.replace('pre-', 'post-'), 'a').write("
                                     "json.load(sys.stdin)['compact_summary'] + '\\n')\n")
    return saw, {"PreCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command": pre}]}],
                 "SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": start}]}],
                 "PostCompact": [{"hooks": [{"type": "command", "command": post}]}]}


async def _drive(spec: AgentSpec, model: ScriptedModel) -> list:
    """Run the agent and write its transcript as an agent actor does (``Progress.observe``)."""
    path = agent_transcript(spec)
    writer = TranscriptWriter(path, session_id=spec.session_id, agent_id=spec.agent_id, cwd=spec.cwd)
    progress = Progress(spec, PriceTable.load())

    async def record_start(messages, typed=None):
        for message in messages:
            await writer.append(message["role"], message)

    events = []
    async for event in run_agent(spec, AgentServices(model=model, on_start=record_start)):
        await progress.observe(event, writer)
        events.append(event)
    writer.close()
    return events


def _env(tmp_path, **extra):
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "20000", **extra}


async def test_sixty_turns_on_a_small_window_complete_with_compaction_boundaries(tmp_path):
    saw, hooks = _hooks(tmp_path)
    spec = _spec(tmp_path, RunSettings(env=_env(tmp_path), hooks=hooks))
    model = _model()
    events = await _drive(spec, model)
    result = events[-1]
    assert isinstance(result, ResultEvent) and not result.is_error and result.result == "All read."
    boundaries = [e for e in events if isinstance(e, CompactBoundary)]
    assert len(boundaries) >= 2
    turns = [r for r in model.requests if SUMMARY_ASK not in json.dumps(r.messages[-1])]
    assert len(turns) == TURNS
    # No request went past the window the run was given.
    assert max(r.max_tokens for r in model.requests) <= 32_000
    assert all(e.compact_metadata["pre_tokens"] >= 13_500 for e in boundaries)
    # PreCompact fired with trigger auto each time, and its stdout reached the summary request.
    payloads = [json.loads(line) for line in saw.read_text().splitlines()]
    assert len(payloads) == len(boundaries) and {p["trigger"] for p in payloads} == {"auto"}
    assert payloads[0]["hook_event_name"] == "PreCompact" and payloads[0]["custom_instructions"] is None
    posted = (tmp_path / "post-compact.jsonl").read_text().splitlines()
    assert posted == ["Reading notes.txt again and again."] * len(boundaries)  # PostCompact: the summary
    asks = [r for r in model.requests if SUMMARY_ASK in json.dumps(r.messages[-1])]
    assert all("Keep the note numbers." in json.dumps(r.messages[-1]) for r in asks)
    # After each: the summary, notes.txt as it is now, what the SessionStart (compact) hook said.
    first_after = model.requests[model.requests.index(asks[0]) + 1].messages[0]
    text = json.dumps(first_after)
    assert "Reading notes.txt again and again." in text and "note 59: something" in text
    assert "SessionStart hook additional context: After compaction: the notes are in notes.txt." in text

    records = [json.loads(line) for line in
               agent_transcript(spec).read_text().splitlines()]
    marks = [i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary"]
    assert len(marks) == len(boundaries)
    boundary, summary = records[marks[-1]], records[marks[-1] + 1]
    assert boundary["type"] == "system" and boundary["parentUuid"] is None
    assert boundary["logicalParentUuid"] == records[marks[-1] - 1]["uuid"]
    assert boundary["compactMetadata"] == {"trigger": "auto", "preTokens": boundaries[-1].compact_metadata["pre_tokens"]}
    assert boundary["uuid"] == boundaries[-1].uuid and boundary["content"] == "Conversation compacted"
    assert summary["isCompactSummary"] is True and summary["parentUuid"] == boundary["uuid"]
    assert records[marks[-1] + 2]["isMeta"] is True  # the file and hook context that came back
    # Resuming starts from the last summary, not from the first prompt.
    history = rebuild_history(agent_transcript(spec))
    assert "Reading notes.txt again and again." in json.dumps(history[0])
    assert "read notes.txt over and over" not in json.dumps(history)


async def test_with_auto_compact_off_no_summary_is_asked_for(tmp_path):
    spec = _spec(tmp_path, RunSettings(env=_env(tmp_path), auto_compact=False)).model_copy(update={"max_turns": 12})
    model = _model()
    events = await _drive(spec, model)
    assert not any(isinstance(e, CompactBoundary) for e in events)
    assert not any(SUMMARY_ASK in json.dumps(r.messages[-1]) for r in model.requests)


async def test_requests_ask_for_the_models_output_limit_or_the_setting(tmp_path):
    spec = _spec(tmp_path, RunSettings(env=_env(tmp_path))).model_copy(update={"max_turns": 1})
    model = _model()
    await _drive(spec, model)
    assert model.requests[0].max_tokens == 32_000
    spec = _spec(tmp_path, RunSettings(env=_env(tmp_path, CLAUDE_CODE_MAX_OUTPUT_TOKENS="4096"))).model_copy(
        update={"max_turns": 1})
    model = _model()
    await _drive(spec, model)
    assert model.requests[0].max_tokens == 4_096


async def test_a_forks_query_source_outlives_the_boilerplate_compaction_summarises_away(tmp_path):
    from covey.subagents.fork import FORK_QUERY_SOURCE, fork_directive, in_fork_child

    spec = _spec(tmp_path, RunSettings(env=_env(tmp_path))).model_copy(
        update={"prompt": fork_directive("read notes.txt over and over"), "query_source": FORK_QUERY_SOURCE})
    events = await _drive(spec, _model())
    assert any(isinstance(e, CompactBoundary) for e in events) and events[-1].result == "All read."
    history = rebuild_history(agent_transcript(spec))
    assert "fork-boilerplate" not in json.dumps(history)  # the fallback guard has nothing left to find
    assert in_fork_child(spec, history)  # the query source still refuses a fork inside a fork
    assert not in_fork_child(spec.model_copy(update={"query_source": None}), history)
