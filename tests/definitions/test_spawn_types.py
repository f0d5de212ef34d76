"""``Agent(Explore, Plan)`` in a definition's tools limits the types its agent launches; a definition's
``isolation: remote`` is refused at launch (no Ray: the Agent tool's routing answers before any launch)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from covey.definitions.builtin import BUILTIN_AGENTS
from covey.definitions.definition import AgentDefinition
from covey.definitions.loader import load_definitions
from covey.definitions.spawn_types import spawnable_types, split_tools, type_refusal
from covey.runtime.limits import Limits
from covey.runtime.ports import SessionRuntime
from covey.runtime.spec import AgentSpec
from covey.subagents.agent_tool import AgentTool
from covey.subagents.children import child_spec
from covey.subagents.fork import CacheSafeParams, fork_spec
from covey.tools.base import ToolContext, ToolServices

REMOTE = AgentDefinition(name="far", description="runs elsewhere", isolation="remote", source="project",
                         path="/p/.claude/agents/far.md")


def _parent(tmp_path: Path, tools: list[str]) -> AgentSpec:
    definitions = {**BUILTIN_AGENTS, "far": REMOTE}
    runtime = SessionRuntime(session_id="s", registry=None, mailbox=None, definitions=definitions,
                             limits=Limits.from_env({}), project_context={str(tmp_path): []})
    boss = AgentDefinition(name="boss", description="d", tools=tools, source="project")
    return AgentSpec(session_id="s", agent_id="a-boss", definition=boss, prompt="go", model_id="claude-sonnet-4-6",
                     cwd=str(tmp_path), runtime=runtime, tool_names=["Read", "Agent"])


async def _call(parent: AgentSpec, **fields):
    tool = AgentTool()
    ctx = ToolContext(agent_id=parent.agent_id, cwd=Path(parent.cwd),
                      services=ToolServices(runtime=parent.runtime, spec=parent))
    return await tool.run(tool.input_model(description="d", prompt="p", **fields), ctx)


@pytest.mark.parametrize("text, parts", [
    ("Read, Grep,Bash", ["Read", "Grep", "Bash"]),
    ("Read, Agent(Explore, Plan), Bash(git log:*)", ["Read", "Agent(Explore, Plan)", "Bash(git log:*)"]),
    ("Agent(Explore)", ["Agent(Explore)"]),
    (" , Read,, ", ["Read"]),
])
def test_a_tools_string_splits_at_commas_outside_parentheses(text, parts):
    assert split_tools(text) == parts


@pytest.mark.parametrize("tools, types", [
    (["*"], None),
    (["Read", "Agent"], None),
    (["Read"], None),
    (["Agent()"], None),
    (["Agent(Explore)"], ["Explore"]),
    (["Read", "Agent(Explore, Plan)"], ["Explore", "Plan"]),
    (["Task(Explore)", "Agent(Plan, Explore)"], ["Explore", "Plan"]),
    (["Agent(Explore)", "Agent"], None),
])
def test_the_types_a_tools_list_allows(tools, types):
    assert spawnable_types(tools) == types


def test_a_definition_file_limits_its_types_in_both_of_claude_codes_forms(tmp_path):
    agents = tmp_path / "project/.claude/agents"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\nname: a\ndescription: d\ntools: Read, Agent(Explore, Plan)\n---\nbody\n")
    (agents / "b.md").write_text('---\nname: b\ndescription: d\ntools: ["Agent(Explore)"]\n---\nbody\n')
    loaded = load_definitions(tmp_path / "project", home=tmp_path / "home").definitions
    assert loaded["a"].tools == ["Read", "Agent(Explore, Plan)"]
    assert spawnable_types(loaded["a"].tools) == ["Explore", "Plan"]
    assert spawnable_types(loaded["b"].tools) == ["Explore"]


async def test_an_agent_limited_to_explore_is_refused_plan_with_the_types_it_may_use(tmp_path):
    result = await _call(_parent(tmp_path, ["Read", "Agent(Explore)"]), subagent_type="Plan")
    assert result.is_error
    assert "agent type 'Plan'" in result.content and "subagent_type set to one of 'Explore'" in result.content


async def test_a_call_without_a_type_is_checked_as_the_default_type(tmp_path):
    result = await _call(_parent(tmp_path, ["Agent(Explore)"]))
    assert result.is_error and "it would be 'general-purpose'" in result.content


def test_an_allowed_type_and_a_bare_agent_pass_the_check():
    limited = AgentDefinition(name="x", tools=["Agent(Explore, Plan)"])
    assert type_refusal(limited, "Explore", named=True) is None
    assert type_refusal(limited, "Plan", named=True) is None
    assert type_refusal(AgentDefinition(name="y", tools=["Read", "Agent"]), "Plan", named=True) is None
    assert type_refusal(limited, "general-purpose", named=False) is not None


async def test_a_child_lists_only_the_types_it_may_launch(tmp_path):
    parent = _parent(tmp_path, ["*"])
    limited = AgentDefinition(name="lead", description="d", tools=["Read", "Agent(Explore)"], source="project")
    call = SimpleNamespace(model=None, cwd=None, prompt="p", mode=None, description="d")
    child = await child_spec(parent, limited, call, agent_id="a-c", tool_use_id="t", background=False,
                             available_tools=["Read", "Agent"])
    assert child.tool_names == ["Read", "Agent"]
    listing = child.prelude[-1]["content"][0]["text"]
    assert "- Explore:" in listing and "- Plan:" not in listing and "general-purpose" not in listing
    assert child.definition.tools == ["Read", "Agent(Explore)"]  # the limit travels in the child's spec


def test_a_fork_of_a_limited_agent_keeps_the_limit(tmp_path):
    params = CacheSafeParams(system=[], tools=[], messages=[{"role": "user", "content": "go"}])
    call = SimpleNamespace(prompt="one part", description="d", cwd=None)
    fork = fork_spec(_parent(tmp_path, ["Read", "Agent(Explore)"]), params, call, agent_id="a-f", tool_use_id="t")
    assert spawnable_types(fork.definition.tools) == ["Explore"]
    free = fork_spec(_parent(tmp_path, ["*"]), params, call, agent_id="a-g", tool_use_id="t")
    assert spawnable_types(free.definition.tools) is None


# -- isolation: remote ----------------------------------------------------------------


async def test_a_definition_with_remote_isolation_is_refused_naming_the_type_and_why(tmp_path):
    result = await _call(_parent(tmp_path, ["*"]), subagent_type="far")
    assert result.is_error
    assert "'far'" in result.content and "no remote backend" in result.content and REMOTE.path in result.content


def test_a_remote_definition_is_a_warning_when_it_loads(tmp_path):
    agents = tmp_path / "project/.claude/agents"
    agents.mkdir(parents=True)
    path = agents / "far.md"
    path.write_text("---\nname: far\ndescription: d\nisolation: remote\n---\nbody\n")
    result = load_definitions(tmp_path / "project", home=tmp_path / "home")
    assert "far" in result.definitions
    assert [(w.source, w.field) for w in result.warnings] == [(str(path), "isolation")]
    assert "no remote backend" in result.warnings[0].message


# -- initialPrompt ----------------------------------------------------------------------


def test_an_initial_prompt_is_kept_and_a_warning_names_the_file_and_field(tmp_path):
    agents = tmp_path / "project/.claude/agents"
    agents.mkdir(parents=True)
    path = agents / "starter.md"
    path.write_text("---\nname: starter\ndescription: d\ninitialPrompt: Review the open PR\n---\nbody\n")
    result = load_definitions(tmp_path / "project", home=tmp_path / "home",
                              flag_agents={"sdk": {"description": "d", "prompt": "p", "initialPrompt": "Begin"}})
    assert result.definitions["starter"].initial_prompt == "Review the open PR"
    assert result.definitions["sdk"].initial_prompt == "Begin"
    assert [(w.source, w.field) for w in result.warnings] == [(str(path), "initialPrompt"), ("--agents sdk", "initialPrompt")]
    assert "not used" in result.warnings[0].message
