"""A background agent's progress summaries and ``task_progress`` events (docs/subagents.md#progress-summaries),
as plain Python: the switch, the clock's rule, the forked request, and the reports of one run
against the scripted model. No Ray."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

from covey.agent.progress import CountedModel, Progress
from covey.agent.progress_reports import ProgressReports, activity, progress_reports
from covey.definitions.definition import AgentDefinition
from covey.agent.progress_summary import (
    INTERVAL_MS, SummaryClock, summary_interval_ms, summary_prompt, summary_request, summary_text,
)
from covey.events import AssistantEvent, TaskProgress
from covey.loop.config import LoopConfig
from covey.model.pricing import PriceTable
from covey.model.scripted import ScriptedModel
from covey.runtime.spec import AgentSpec, RunSettings
from covey.settings.merged import Settings

CACHE = {"type": "ephemeral"}
SYSTEM = [{"type": "text", "text": "You are a careful helper."}]
TOOLS = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]


# -- the switch ----------------------------------------------------------------------


@pytest.mark.parametrize("option, setting, env, settings_env, interval", [
    (None, None, {}, None, None),  # off by default, as in Claude Code
    (True, None, {}, None, INTERVAL_MS),
    (None, True, {}, None, INTERVAL_MS),
    (None, None, {"COVEY_AGENT_PROGRESS_SUMMARIES": "1"}, None, INTERVAL_MS),
    (None, None, {}, {"COVEY_AGENT_PROGRESS_SUMMARIES": "true"}, INTERVAL_MS),
    (False, True, {"COVEY_AGENT_PROGRESS_SUMMARIES": "1"}, None, None),  # the program's option wins
    (None, False, {"COVEY_AGENT_PROGRESS_SUMMARIES": "1"}, None, None),  # then the setting
    (True, None, {"COVEY_AGENT_PROGRESS_INTERVAL_MS": "250"}, None, 250),
    (True, None, {"COVEY_AGENT_PROGRESS_INTERVAL_MS": "soon"}, None, INTERVAL_MS),
    (True, True, {"CLAUDE_CODE_DISABLE_AGENT_PROGRESS_SUMMARIES": "1"}, None, None),  # Claude Code's off switch
    (True, None, {}, {"COVEY_DISABLE_AGENT_PROGRESS_SUMMARIES": "1"}, None),
    (True, None, {"COVEY_DISABLE_AGENT_PROGRESS_SUMMARIES": "0", "CLAUDE_CODE_DISABLE_AGENT_PROGRESS_SUMMARIES": "1"},
     None, INTERVAL_MS),  # covey's name wins where both are set
])
def test_summaries_are_off_unless_the_option_the_setting_or_the_env_says_so(option, setting, env, settings_env, interval):
    assert summary_interval_ms(option, setting, env, settings_env) == interval


def test_the_setting_is_read_from_a_settings_file(tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"agentProgressSummaries": True}))
    settings = Settings.load(tmp_path, home=tmp_path / "home")
    assert settings.agent_progress_summaries is True


# -- the clock -----------------------------------------------------------------------


def test_the_first_summary_is_due_one_interval_after_the_start():
    clock = SummaryClock(30, started=100)
    assert clock.wait_s(100) == 30 and not clock.due(129.9, 10)
    assert clock.due(130, 10)


def test_only_one_summary_is_in_flight_and_the_next_counts_from_its_end():
    clock = SummaryClock(30, started=0)
    assert clock.due(30, 10)
    assert not clock.due(31, 10) and not clock.due(100, 10)  # one in flight: never a second
    assert clock.done(45, "Reading greet.py") == "Reading greet.py"
    assert clock.next_at == 75  # from the end of the slow one, not its start
    assert not clock.due(74, 11) and clock.due(75, 11)


def test_a_short_conversation_is_not_summarised_and_the_tick_moves_on():
    clock = SummaryClock(30, started=0, min_messages=3)
    assert not clock.due(30, 2)
    assert clock.next_at == 60 and not clock.in_flight
    assert clock.due(60, 3)


def test_a_repeated_summary_is_not_shown_again():
    clock = SummaryClock(1, started=0)
    clock.due(1, 5)
    assert clock.done(2, "Reading a.py") == "Reading a.py"
    clock.due(3, 6)
    assert clock.done(4, "Reading a.py") is None and clock.last == "Reading a.py"
    clock.due(5, 7)
    assert clock.done(6, "Editing a.py") == "Editing a.py"


def test_no_summary_while_the_conversation_is_unchanged():
    clock = SummaryClock(1, started=0)
    assert clock.due(1, 5)
    clock.done(2, "Reading a.py")
    assert not clock.due(3, 5) and clock.next_at == 4  # nothing new since: the tick moves on
    assert clock.due(4, 6)


def test_failures_in_a_row_double_the_interval_and_a_success_resets_it():
    clock = SummaryClock(10, started=0, max_failures=2)
    clock.due(10, 5)
    clock.done(11, None)
    assert clock.next_at == 21
    clock.due(21, 6)
    clock.done(22, None)
    assert clock.failures == 2 and clock.next_at == 42  # doubled
    clock.due(42, 7)
    clock.done(43, "Running tests")
    assert clock.failures == 0 and clock.next_at == 53


def test_nothing_is_due_or_shown_once_the_run_ended():
    clock = SummaryClock(1, started=0)
    assert clock.due(1, 5)
    clock.stop()
    assert clock.done(2, "Reading a.py") is None  # the answer came after the end
    assert not clock.due(100, 5)


# -- the forked request --------------------------------------------------------------


def _history() -> list[dict]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "Fix greet.py"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Reading it."},
                                          {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "greet.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "def greet(): ..."}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "x.py"}}]},
    ]


def _loop(messages: list[dict] | None = None) -> SimpleNamespace:
    messages = _history() if messages is None else messages
    config = LoopConfig(model_id="claude-sonnet-4-5", system=SYSTEM, max_tokens=16_000, betas=["b1"])
    return SimpleNamespace(config=config, messages=messages,
                           cache_safe_params=lambda: (list(SYSTEM), list(TOOLS), list(messages)))


def test_the_summary_request_is_the_agents_last_request_plus_the_question():
    request = summary_request(_loop(), summary_prompt("Reading greet.py"), "agent-1")
    body = request.to_api_kwargs()
    # The agent's own system prompt, tools, model, output limit and betas: the cache key is the agent's.
    assert body["system"] == [{**SYSTEM[0], "cache_control": CACHE}]
    assert body["tools"] == [{**TOOLS[0], "cache_control": CACHE}]
    assert request.model == "claude-sonnet-4-5" and request.max_tokens == 16_000 and request.betas == ["b1"]
    messages = body["messages"]
    # The call still running (t2) is left out, with the message it made; the prefix ends on a breakpoint.
    assert len(messages) == 4 and "t2" not in json.dumps(messages)
    assert messages[2]["content"][-1]["cache_control"] == CACHE
    assert messages[:2] == _history()[:2]
    question = messages[-1]["content"][-1]
    assert messages[-1]["role"] == "user" and question["cache_control"] == CACHE
    assert "3 to 5 words" in question["text"] and 'Your last summary was "Reading greet.py"' in question["text"]
    assert request.agent_id == "agent-1"


def test_the_summary_is_the_replys_first_text_on_one_line():
    assert summary_text(SimpleNamespace(content=[{"type": "tool_use"}, {"type": "text", "text": "  Reading\n a.py "}])) == "Reading a.py"
    assert summary_text(SimpleNamespace(content=[{"type": "text", "text": "  "}])) is None
    assert len(summary_text(SimpleNamespace(content=[{"type": "text", "text": "x" * 500}])) or "") == 200


# -- one run's reports ---------------------------------------------------------------


def _spec(interval_ms: int | None = None) -> AgentSpec:
    return AgentSpec(session_id="s", agent_id="agent-7", definition=AgentDefinition(name="Explore", prompt="p"),
                     prompt="go", model_id="claude-sonnet-4-5", cwd=".", depth=1, background=True,
                     tool_use_id="toolu_9", description="Explore the parser",
                     settings=RunSettings(progress_summary_ms=interval_ms))


def _reports(interval_ms: int | None, rules: list[dict]) -> tuple[ProgressReports, list, ScriptedModel, Progress]:
    spec = _spec(interval_ms)
    progress = Progress(spec, PriceTable.load())
    model = ScriptedModel.from_dict({"rules": rules})
    sent: list = []
    return ProgressReports(spec, progress, CountedModel(model, progress), sent.append, interval_ms), sent, model, progress


async def test_a_reply_that_calls_tools_sends_task_progress_with_the_agents_figures():
    reports, sent, _, progress = _reports(None, [])
    progress.on_tool_turn = reports.tool_turn
    message = {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 90, "output_tokens": 10},
               "content": [{"type": "tool_use", "id": "a", "name": "Grep", "input": {}},
                           {"type": "tool_use", "id": "b", "name": "Read", "input": {}}]}

    class Writer:
        async def append(self, *args, **kwargs) -> None:
            pass

    await progress.observe(AssistantEvent(message=message, session_id="s"), Writer())
    (event,) = sent
    assert isinstance(event, TaskProgress)
    wire = event.wire()
    assert wire["type"] == "system" and wire["subtype"] == "task_progress"
    assert wire["task_id"] == "agent-7" and wire["tool_use_id"] == "toolu_9" and wire["subagent_type"] == "Explore"
    assert wire["description"] == "Explore the parser" and wire["last_tool_name"] == "Read" and "summary" not in wire
    assert wire["usage"]["total_tokens"] == 100 and wire["usage"]["tool_uses"] == 2 and wire["usage"]["duration_ms"] >= 0
    assert set(wire) == {"type", "subtype", "task_id", "tool_use_id", "description", "subagent_type", "usage",
                         "last_tool_name", "uuid", "session_id", "written_at"}


async def test_summaries_come_while_the_run_works_and_their_cost_is_the_agents():
    reports, sent, model, progress = _reports(20, [
        {"when": {"last_message_contains": "3 to 5 words", "messages_lack": "Your last summary"},
         "reply": {"text": "Reading greet.py"}},
        {"when": {"last_message_contains": "Your last summary"}, "reply": {"text": "Fixing greet()"}},
    ])
    loop = _loop()
    reports.start(loop)
    for _ in range(200):
        if len(sent) >= 2:
            break
        if len(sent) == 1 and len(loop.messages) == 4:  # the agent goes on: something new to summarise
            loop.messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "x"}]})
        await asyncio.sleep(0.01)
    await reports.stop()
    assert [e.summary for e in sent[:2]] == ["Reading greet.py", "Fixing greet()"]
    assert all(e.description == e.summary and e.last_tool_name is None for e in sent)
    assert model.requests and progress.usage.total > 0  # each request counted as the agent's
    assert sent[-1].usage.total_tokens == progress.usage.total or len(sent) > 2
    count = len(model.requests)
    await asyncio.sleep(0.08)
    assert len(model.requests) == count  # stopped: nothing more is asked
    assert not [task for task in asyncio.all_tasks() if task.get_name().startswith("progress summaries")]


async def test_a_failing_summary_request_never_fails_the_run():
    reports, sent, model, _ = _reports(10, [])  # no rule answers: every request fails
    reports.start(_loop())
    await asyncio.sleep(0.1)
    await reports.stop()
    assert sent == [] and reports.summaries is not None and reports.summaries.failures >= 1


async def test_no_summary_of_a_conversation_too_short():
    reports, sent, model, _ = _reports(10, [{"when": {}, "reply": {"text": "Reading"}}])
    reports.start(_loop(messages=[{"role": "user", "content": "go"}]))
    await asyncio.sleep(0.08)
    await reports.stop()
    assert sent == [] and model.requests == []


def test_a_sub_agent_whose_events_are_read_has_reports_where_its_messages_go():
    root = SimpleNamespace(tell_relay=lambda event: None)
    runtime = SimpleNamespace(root=root, child_events=True)
    spec = _spec(20).model_copy(update={"runtime": runtime})
    progress = Progress(spec, PriceTable.load())

    def emit(event):
        return None

    assert progress_reports(spec, progress, None, emit).send == root.tell_relay  # background: the root's stream
    assert progress_reports(spec.model_copy(update={"background": False}), progress, None, emit).send is emit  # sync: its own
    assert progress_reports(spec.model_copy(update={"depth": 0}), progress, None, emit) is None  # the main agent
    quiet = SimpleNamespace(root=root, child_events=False)  # text or json output: nobody reads them
    assert progress_reports(spec.model_copy(update={"runtime": quiet}), progress, None, emit) is None


def test_a_programs_initialize_turns_summaries_on_or_off():
    from covey.cli.sdk import sdk_options  # the TypeScript SDK's ``agentProgressSummaries``

    assert sdk_options({"agentProgressSummaries": True})["agent_progress_summaries"] is True
    assert sdk_options({"agentProgressSummaries": False})["agent_progress_summaries"] is False
    assert "agent_progress_summaries" not in sdk_options({"forwardSubagentText": True})


async def test_the_last_summary_reaches_the_registry_and_covey_ps():
    from covey.cli.inspect import session_lines
    from covey.registry.supervisor import Supervisor
    from covey.runtime.limits import Limits
    from covey.teams.mailbox import Mailbox
    from tests.registry.fakes import FakeClock, FakePool, request, spec

    sup = Supervisor(Limits(max_depth=2, max_concurrent=4, stall_ms=60_000), pool=FakePool(), mailbox=Mailbox(),
                     clock=FakeClock())
    await sup.register_main("main", "m", "/tmp")
    await sup.launch(request("a", background=True), spec("a"), follow=False, output_file="/t/a.jsonl")
    told: dict = {}
    progress = Progress(_spec(20), PriceTable.load())
    progress.spec = progress.spec.model_copy(update={"runtime": SimpleNamespace(
        registry=SimpleNamespace(tell_progress=lambda agent_id, **fields: told.update(fields)), limits=Limits())})
    progress.summarized("Reading greet.py")
    await asyncio.sleep(0.6)  # the progress message goes at most every 0.5 s
    assert told["summary"] == "Reading greet.py"
    await sup.progress("a", **told)
    assert session_lines("abcd1234", await sup.records())[2].endswith("· Reading greet.py")
    await sup.close()


@pytest.mark.parametrize("name, given, said", [
    ("Read", {"file_path": "/work/app/src/a.py"}, "Reading src/a.py"),  # in the agent's folder: relative
    ("Read", {"file_path": "/etc/hosts"}, "Reading /etc/hosts"),
    ("Edit", {"file_path": "b.py"}, "Editing b.py"),
    ("Grep", {"pattern": "def greet"}, "Searching for def greet"),
    ("Glob", {"pattern": "**/*.py"}, "Finding **/*.py"),
    ("Bash", {"command": "pytest -q", "description": "the tests"}, "Running the tests"),
    ("Bash", {"command": "x" * 80}, "Running " + "x" * 59 + "…"),
    ("Bash", {}, "Running command"),
    ("Agent", {"description": "Check the parser"}, "Check the parser"),
    ("TodoWrite", {"todos": []}, None),  # no phrase: the task's description stands
    ("Read", {}, None),
])
def test_what_a_call_is_doing_in_claude_codes_words(name, given, said):
    assert activity(name, given, "/work/app") == said


async def test_a_background_childs_run_sends_its_progress_to_the_session_root(tmp_path):
    """The whole run in this process (``AgentRunner``, no Ray): its replies that call tools and its
    summaries reach the root's stream, the summary requests count in its report, and the run
    leaves no task behind."""
    from covey.agent.runner import AgentRunner
    from covey.runtime.ports import SessionRuntime

    (tmp_path / "a.txt").write_text("a\n")
    relayed: list = []
    async def ask(request):
        return False

    root = SimpleNamespace(tell_relay=relayed.append, tell_progress=lambda agent_id, **fields: None, ask=ask)
    runtime = SessionRuntime(session_id="s", registry=root, mailbox=None, root=root)  # type: ignore[arg-type]
    model = ScriptedModel.from_dict({"rules": [
        {"when": {"last_message_contains": "3 to 5 words"}, "reply": {"text": "Reading a.txt"}},
        {"when": {"last_tool_result_contains": "a"}, "reply": {"text": "done"}, "latency_s": 0.3},
        {"when": {}, "reply": {"tool_use": {"name": "Read", "input": {"file_path": str(tmp_path / "a.txt")}}},
         "latency_s": 0.3},
    ]})
    spec = _spec(50).model_copy(update={"model": model, "runtime": runtime, "cwd": str(tmp_path), "tool_names": ["Read"],
                                        "transcript_dir": str(tmp_path / "t"), "parent_agent_id": "main"})
    runner = AgentRunner()
    await runner.start(spec)
    report = await runner.wait()
    assert report.status == "completed", report.text
    progress = [event for event in relayed if isinstance(event, TaskProgress)]
    assert [(e.last_tool_name, e.description) for e in progress if e.last_tool_name] == [("Read", "Reading a.txt")]
    summaries = [e for e in progress if e.summary]
    assert summaries and summaries[0].summary == "Reading a.txt"
    asked = [r for r in model.requests if "3 to 5 words" in json.dumps(r.messages)]
    assert asked and report.usage.total >= summaries[-1].usage.total_tokens > 0
    await asyncio.sleep(0)
    assert not [task for task in asyncio.all_tasks() if task.get_name().startswith("progress summaries")]


def test_verbose_text_output_shows_a_summary_not_a_tool_calls_progress():
    from covey.events.describe import describe

    assert describe(TaskProgress(task_id="a", description="x", summary="Reading a.py", agent_id="agent-7")) == \
        ["[agent-7] progress: Reading a.py"]
    assert describe(TaskProgress(task_id="a", description="x", last_tool_name="Read", agent_id="agent-7")) == []
