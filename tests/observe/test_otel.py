"""OpenTelemetry spans of an agent run, read with the SDK's in-memory exporter, in this process
(no Ray): ``invoke_agent`` continuing the trace its spec names, ``chat`` and ``execute_tool`` under
it, parallel calls side by side, and a child's ``traceparent`` taken from its Agent call's span."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from covey.agent.runner import AgentRunner
from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.observe import otel
from covey.runtime.records import FinalReport
from covey.runtime.spec import AgentSpec, RunSettings

TRACED = {"OTEL_TRACES_EXPORTER": "console"}
PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"  # an Agent call's span in another process


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    """The program's own provider (as an application that set up OpenTelemetry has): covey's spans go to it."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    trace.set_tracer_provider(provider)
    return memory


@pytest.fixture
def spans(exporter):
    exporter.clear()
    yield exporter
    exporter.clear()


def _spec(tmp_path, model, **fields) -> AgentSpec:
    return AgentSpec(session_id="sess-1", agent_id="agent-c", definition=AgentDefinition(name="reader"), prompt="read",
                     model=model, model_id="claude-test", cwd=str(tmp_path), tool_names=["Read"], depth=1,
                     transcript_dir=str(tmp_path), description="read two files", **fields)


def _two_reads(tmp_path) -> ScriptedModel:
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(f"{name} text\n")
    calls = [{"name": "Read", "input": {"file_path": str(tmp_path / name)}} for name in ("a.txt", "b.txt")]
    return ScriptedModel.from_dict({"rules": [
        {"when": {"last_tool_result_contains": "b.txt text"}, "reply": {"text": "both read"}},
        {"when": {}, "reply": {"tool_use": calls}},
    ]})


async def test_an_agent_run_is_an_invoke_agent_span_with_its_requests_and_tool_calls_under_it(tmp_path, spans):
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, _two_reads(tmp_path), traceparent=PARENT, settings=RunSettings(otel=TRACED)))
    assert (await asyncio.wait_for(runner.wait(), 20)).status == "completed"
    finished = spans.get_finished_spans()
    (agent,) = [s for s in finished if s.attributes["gen_ai.operation.name"] == "invoke_agent"]
    assert agent.name == "invoke_agent reader"
    assert f"{agent.context.trace_id:032x}" == PARENT.split("-")[1]  # the launching call's trace
    assert f"{agent.parent.span_id:016x}" == PARENT.split("-")[2]  # under the launching call's span
    assert agent.attributes["gen_ai.agent.id"] == "agent-c" and agent.attributes["gen_ai.conversation.id"] == "sess-1"
    assert agent.attributes["covey.agent.status"] == "completed"
    chats = [s for s in finished if s.attributes["gen_ai.operation.name"] == "chat"]
    tools = [s for s in finished if s.attributes["gen_ai.operation.name"] == "execute_tool"]
    assert len(chats) == 2 and len(tools) == 2
    for span in chats + tools:
        assert span.parent.span_id == agent.context.span_id and span.context.trace_id == agent.context.trace_id
    assert chats[0].name == "chat claude-test" and chats[0].attributes["gen_ai.request.model"] == "claude-test"
    assert chats[0].attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert all(s.attributes["gen_ai.usage.output_tokens"] >= 0 for s in chats)
    assert {s.attributes["gen_ai.tool.name"] for s in tools} == {"Read"}
    assert len({s.attributes["gen_ai.tool.call.id"] for s in tools}) == 2
    first, second = sorted(tools, key=lambda s: s.start_time)
    assert second.start_time < first.end_time  # the two reads ran side by side, not one inside the other


async def test_a_failed_tool_call_is_an_error_span_and_a_run_without_a_traceparent_starts_its_trace(tmp_path, spans):
    model = ScriptedModel.from_dict({"rules": [
        {"when": {"last_tool_result_contains": "does not exist"}, "reply": {"text": "no such file"}},
        {"when": {}, "reply": {"tool_use": {"name": "Read", "input": {"file_path": str(tmp_path / "none.txt")}}}},
    ]})
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, model, settings=RunSettings(otel=TRACED)))
    await asyncio.wait_for(runner.wait(), 20)
    finished = {s.attributes["gen_ai.operation.name"]: s for s in spans.get_finished_spans()}
    assert finished["execute_tool"].status.status_code == trace.StatusCode.ERROR
    assert finished["execute_tool"].attributes["error.type"] == "tool_error"
    assert finished["invoke_agent"].parent is None


async def test_a_run_that_did_not_complete_is_an_error_span(tmp_path, spans):
    span = otel.AgentSpan(_spec(tmp_path, None, settings=RunSettings(otel=TRACED)))
    await span.end(FinalReport(status="killed", text="stopped by covey kill"))
    (agent,) = spans.get_finished_spans()
    assert agent.status.status_code == trace.StatusCode.ERROR and agent.attributes["error.type"] == "killed"


async def test_a_child_is_handed_the_traceparent_of_the_agent_call_it_runs_under(tmp_path, spans):
    span = otel.AgentSpan(_spec(tmp_path, None, settings=RunSettings(otel=TRACED)))
    with otel.tool_span("Agent", "toolu_1") as call:
        handed = otel.traceparent()
    await span.end(FinalReport(status="completed", text="ok"))
    assert handed.startswith(f"00-{call.context.trace_id:032x}-{call.context.span_id:016x}-")
    assert otel.traceparent() is None  # outside a traced run there is nothing to hand on


async def test_an_untraced_run_makes_no_spans(tmp_path, spans):
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, _two_reads(tmp_path)))
    assert (await asyncio.wait_for(runner.wait(), 20)).status == "completed"
    assert spans.get_finished_spans() == ()


def test_the_variables_turn_traces_on_and_none_keeps_them_off():
    assert otel.settings_of({"PATH": "/bin"}) is None
    assert otel.settings_of({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}) is None
    assert otel.settings_of({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SERVICE_NAME": "x", "HOME": "/h"}) \
        == {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SERVICE_NAME": "x"}
    assert otel.settings_of({"OTEL_TRACES_EXPORTER": "console"}) == {"OTEL_TRACES_EXPORTER": "console"}
    assert otel.settings_of({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}) is None


UNTRACED_RUN = """
import asyncio, os, sys
from covey.agent.runner import AgentRunner
from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.runtime.spec import AgentSpec
from covey.session.main_agent import main_spec
from covey.subagents.launch import Launch
from covey.observe.otel import settings_of

async def main():
    model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "done"}}]})
    spec = AgentSpec(session_id="s", agent_id="agent-x", definition=AgentDefinition(name="t"), prompt="hi",
                     model=model, model_id="m", cwd=os.getcwd(), tool_names=["Read"], transcript_dir=os.getcwd(),
                     settings={"otel": settings_of(os.environ)})
    runner = AgentRunner()
    await runner.start(spec)
    assert (await runner.wait()).status == "completed"

asyncio.run(main())
print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
"""


def test_without_the_variables_a_run_imports_no_opentelemetry(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", UNTRACED_RUN], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_variables_without_the_extra_say_so_in_one_line_and_run_untraced(tmp_path):
    code = ("import sys; sys.modules['opentelemetry'] = None\n"  # as if the otel extra were not installed
            "from covey.observe.otel import settings_of\n"
            "print(settings_of({'OTEL_EXPORTER_OTLP_ENDPOINT': 'http://127.0.0.1:4318'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "None"
    assert done.stderr.strip().splitlines() == [
        "covey: OTEL_EXPORTER_OTLP_ENDPOINT is set, but OpenTelemetry is not installed, so no trace is exported: "
        "pip install 'covey[otel]'"]


async def test_a_trace_that_cannot_start_leaves_the_run_untraced_not_broken(tmp_path, spans, monkeypatch, capsys):
    def broken(settings):
        raise RuntimeError("no exporter here")

    monkeypatch.setattr(otel, "_provider", broken)
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, _two_reads(tmp_path), settings=RunSettings(otel=TRACED)))
    assert (await asyncio.wait_for(runner.wait(), 20)).status == "completed"
    assert spans.get_finished_spans() == ()
    assert "no OpenTelemetry trace of this agent: RuntimeError: no exporter here" in capsys.readouterr().err


async def test_the_turns_of_a_session_are_one_trace_and_another_session_is_another(tmp_path, monkeypatch):
    """With the provider covey makes from the variables, each turn's main agent (a root run, in any
    process) takes its session's trace id; a child still continues its Agent call's trace."""
    memory = InMemorySpanExporter()
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    own = otel._made_provider()
    own.add_span_processor(SimpleSpanProcessor(memory))
    monkeypatch.setattr(otel, "_provider", lambda settings: own)
    session = "3f2b8c1e-9d4a-4c6b-8e2f-0a1b2c3d4e5f"

    def main_turn(session_id: str) -> otel.AgentSpan:
        return otel.AgentSpan(_spec(tmp_path, None, settings=RunSettings(otel=TRACED)).model_copy(
            update={"session_id": session_id, "depth": 0}))

    for session_id in (session, session, "not-a-uuid-session"):
        span = main_turn(session_id)
        with otel.tool_span("Agent", "toolu_1"):
            handed = otel.traceparent()
        await span.end(FinalReport(status="completed", text="ok"))
    child = otel.AgentSpan(_spec(tmp_path, None, settings=RunSettings(otel=TRACED), traceparent=handed))
    await child.end(FinalReport(status="completed", text="ok"))
    agents = [s for s in memory.get_finished_spans() if s.attributes["gen_ai.operation.name"] == "invoke_agent"]
    first, second, other, kid = agents
    assert first.context.trace_id == second.context.trace_id == int(session.replace("-", ""), 16)
    assert first.parent is None and second.parent is None and first.context.span_id != second.context.span_id
    assert other.context.trace_id not in (0, first.context.trace_id)
    assert kid.context.trace_id == other.context.trace_id and kid.parent is not None
