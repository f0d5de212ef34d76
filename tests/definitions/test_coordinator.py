"""Coordinator mode without Ray: the switch, the definitions, the coordinator's prompt and tools,
the Agent tool's schema and routing, the workers' tool set (docs/coordinator.md)."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from covey.agent.catalog import tool_catalog, tool_names
from covey.agent.team_context import team_context_for
from covey.cli.agents import agents_report
from covey.definitions.builtin import builtin_agents
from covey.definitions.coordinator import coordinator_mode, coordinator_prompt, worker_tools
from covey.definitions.definition import AgentDefinition
from covey.definitions.resolve import ASYNC_ALLOWED
from covey.model.scripted import ScriptedModel
from covey.runtime.ports import SessionRuntime
from covey.runtime.spec import AgentSpec
from covey.session import Session
from covey.subagents.agent_tool import AgentTool
from covey.subagents.launch import Launch
from covey.tools.options import ToolOptions

CORPUS = Path(__file__).parents[1] / "data/claude_files/coordinator"
SWITCHES = ("COVEY_COORDINATOR_MODE", "CLAUDE_CODE_COORDINATOR_MODE")


@pytest.fixture(autouse=True)
def _no_switch_here(monkeypatch):
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path) -> Path:
    return Path(shutil.copytree(CORPUS / "project", tmp_path / "project"))


def _session(project: Path, **options) -> Session:
    env = {"HOME": str(project.parent / "home"), "PATH": "/usr/bin:/bin", **options.pop("env", {})}
    return Session(cwd=str(project), env=env, model=ScriptedModel.from_dict({"rules": []}), **options)


# --- the switch ----------------------------------------------------------------------------

@pytest.mark.parametrize("env, on", [
    ({}, False),
    ({"COVEY_COORDINATOR_MODE": "1"}, True),
    ({"CLAUDE_CODE_COORDINATOR_MODE": "true"}, True),
    ({"CLAUDE_CODE_COORDINATOR_MODE": " Yes "}, True),
    ({"COVEY_COORDINATOR_MODE": "0"}, False),
    ({"COVEY_COORDINATOR_MODE": "0", "CLAUDE_CODE_COORDINATOR_MODE": "1"}, False),  # covey's decides
    ({"COVEY_COORDINATOR_MODE": "", "CLAUDE_CODE_COORDINATOR_MODE": "on"}, True),  # empty is unset
])
def test_either_variable_turns_it_on_and_coveys_wins(env, on):
    assert coordinator_mode(env) is on


def test_the_session_reads_the_runs_env_and_an_explicit_option_wins(project):
    assert _session(project, env={"CLAUDE_CODE_COORDINATOR_MODE": "1"}).options.coordinator
    assert not _session(project).options.coordinator
    assert not _session(project, env={"COVEY_COORDINATOR_MODE": "1"}, coordinator=False).options.coordinator
    assert _session(project, coordinator=True).options.coordinator


# --- definitions ----------------------------------------------------------------------------

def test_worker_replaces_the_built_ins_and_the_projects_own_types_stay(project):
    """As in Claude Code: only the built-in set is swapped; files and --agents still load."""
    session = _session(project, env={"COVEY_COORDINATOR_MODE": "1"}, agents={"linter": {"description": "l", "prompt": "p"}})
    assert set(session.definitions) == {"worker", "reviewer", "linter"}
    assert session.definitions["worker"].source == "built-in"
    assert sorted(session.init_event().agents) == ["linter", "reviewer", "worker"]
    assert "general-purpose" in _session(project).definitions and "worker" not in _session(project).definitions


def test_covey_agents_lists_worker_as_the_only_built_in(project):
    text = agents_report(str(project), None, [], {"HOME": str(project.parent / "home"), "COVEY_COORDINATOR_MODE": "1"})
    assert text.startswith("Coordinator mode is on")
    listed = [line.split()[0] for line in text.splitlines() if line.startswith("  ") and "· model:" in line]
    assert listed == ["worker", "reviewer"]
    worker = next(line for line in text.splitlines() if line.strip().startswith("worker"))
    assert "built-in · model: inherit · tools: All tools except SendMessage" in worker
    plain = agents_report(str(project), None, [], {"HOME": str(project.parent / "home")})
    assert "Coordinator mode" not in plain and "general-purpose" in plain and "  worker" not in plain


# --- the coordinator: prompt, tools, context ----------------------------------------------------

def test_the_coordinators_prompt_replaces_the_main_agents():
    prompt = coordinator_prompt()
    assert prompt.startswith("You are covey, running in coordinator mode")
    for needed in ("research", "implement", "verify", "<task-notification>", "SendMessage", "agentId",
                   "Never guess", "Synthesise", "subagent_type: \"worker\""):
        assert needed.lower() in prompt.lower(), needed


def test_the_main_spec_carries_the_coordinator_prompt_its_tools_and_its_workers_tools(project):
    session = _session(project, coordinator=True)
    assert session.tool_names() == ["TaskStop", "SendMessage", "Agent"]
    assert session.init_event().tools == ["TaskStop", "SendMessage", "Agent"]
    assert session._main_prompt() == coordinator_prompt()
    prelude = [block["text"] for message in session._main_prelude(None) for block in message["content"]]
    workers = next(text for text in prelude if text.startswith("<system-reminder>\nCoordinator mode."))
    assert "have these tools: Read, Write, Edit, Glob, Grep, Bash, TodoWrite, NotebookEdit, WebFetch, WebSearch, Skill, Agent." in workers
    assert any("- worker: " in text for text in prelude)  # the agent list


def test_a_system_prompt_of_ones_own_still_wins_and_appending_still_appends(project):
    assert _session(project, coordinator=True, system_prompt="mine")._main_prompt() == "mine"
    appended = _session(project, coordinator=True, append_system_prompt="also this")._main_prompt()
    assert appended == coordinator_prompt() + "\n\nalso this"


def test_tools_and_disallowed_tools_narrow_the_coordinators_set(project):
    assert _session(project, coordinator=True, tools=["Agent", "Read"]).tool_names() == ["Agent"]
    assert _session(project, coordinator=True, disallowed_tools=["SendMessage"]).tool_names() == ["TaskStop", "Agent"]


# --- the Agent tool -------------------------------------------------------------------------

def _schema_fields(options: ToolOptions) -> set[str]:
    agent = next(tool for tool in tool_catalog(options) if tool.name == "Agent")
    return set(agent.schema()["input_schema"]["properties"])


def test_the_schema_has_no_run_in_background_and_sendmessage_exists_without_teams():
    assert "run_in_background" not in _schema_fields(ToolOptions(coordinator=True))
    assert "run_in_background" in _schema_fields(ToolOptions())
    assert "SendMessage" in tool_names(ToolOptions(coordinator=True))
    assert "SendMessage" not in tool_names(ToolOptions())
    assert tool_names(ToolOptions(coordinator=True)).count("SendMessage") == 1
    assert tool_names(ToolOptions(coordinator=True, teams=True)).count("SendMessage") == 1


def _launch(runtime: SimpleNamespace, **call) -> Launch:
    tool = AgentTool(background=not runtime.tools.coordinator)
    return Launch(tool.input_model(description="d", prompt="p", **call), SimpleNamespace(), SimpleNamespace(), runtime)


def _runtime(coordinator: bool) -> SimpleNamespace:
    tools = ToolOptions(coordinator=coordinator)
    return SimpleNamespace(tools=tools, coordinator=coordinator, definitions=builtin_agents(coordinator=coordinator))


def test_every_spawn_is_async_and_a_call_without_a_type_starts_a_worker():
    launch = _launch(_runtime(True))
    assert launch.agent_type == "worker" and launch.definition.name == "worker" and launch.background
    assert _launch(_runtime(True), subagent_type="worker").background
    plain = _launch(_runtime(False))
    assert plain.agent_type == "general-purpose" and not plain.background
    assert _launch(_runtime(False), run_in_background=True).background


def test_agent_permission_rules_see_the_worker_type():
    tool = AgentTool(background=False)
    call = tool.input_model(description="d", prompt="p")
    ctx = SimpleNamespace(services=SimpleNamespace(runtime=_runtime(True)))
    assert tool.permission_subject(call, ctx) == "worker"
    assert tool.permission_subject(call) == "general-purpose"


# --- workers --------------------------------------------------------------------------------

def test_workers_get_the_async_allowed_tools_without_sendmessage():
    available = tool_names(ToolOptions(coordinator=True))
    tools = worker_tools(builtin_agents(coordinator=True), available, max_depth=3)
    assert tools == ["Read", "Write", "Edit", "Glob", "Grep", "Bash", "TodoWrite", "NotebookEdit", "WebFetch", "WebSearch", "Skill", "Agent"]
    assert set(tools) <= ASYNC_ALLOWED and "SendMessage" not in tools
    assert "Agent" not in worker_tools(builtin_agents(coordinator=True), available, max_depth=1)  # at the limit
    assert worker_tools({}, available, max_depth=3) == []


def test_a_users_own_worker_definition_is_the_one_workers_run(project):
    own = AgentDefinition(name="worker", description="mine", prompt="p", tools=["Read", "Bash", "Write"])
    session = _session(project, coordinator=True, agents=[own])
    assert session.definitions["worker"].description == "mine"
    available = tool_names(ToolOptions(coordinator=True))
    assert worker_tools(session.definitions, available, max_depth=3) == ["Read", "Write", "Bash"]


# --- SendMessage reaches and resumes workers without teams ------------------------------------------

def _spec(runtime: SessionRuntime, depth: int) -> AgentSpec:
    return AgentSpec(session_id="s", agent_id=f"agent-{depth}", definition=AgentDefinition(name="t"), prompt="p",
                     model_id="m", cwd="/tmp", depth=depth, runtime=runtime)


def test_the_coordinator_can_message_without_teams_and_is_named_coordinator():
    runtime = SessionRuntime(session_id="s", registry=None, mailbox=None, tools=ToolOptions(coordinator=True))
    assert runtime.messaging and runtime.coordinator and not runtime.teams
    context = team_context_for(_spec(runtime, 0))
    assert context is not None and context.me == "coordinator" and context.after_send is not None
    assert context.make_team is not None and context.roster is None
    assert team_context_for(_spec(runtime, 1)).me == "t"  # a child (not a worker: they lack SendMessage)
    plain = SessionRuntime(session_id="s", registry=None, mailbox=None, tools=ToolOptions())
    assert team_context_for(_spec(plain, 0)) is None
