import pytest

from covey.definitions.builtin import BUILTIN_AGENTS
from covey.definitions.definition import AgentDefinition
from covey.definitions.resolve import ASYNC_ALLOWED, child_effort, resolve_agent_model, resolve_tools, subagent_model_override
from covey.errors import UserError
from covey.model.aliases import DEFAULT_SUBAGENT_MODEL, resolve_model

PARENT = "claude-opus-4-8"
ALL = ["Read", "Write", "Edit", "Glob", "Grep", "Bash", "Agent", "TeamCreate", "TeamDelete", "WebFetch", "mcp__slack__post"]


def custom(**fields):
    return AgentDefinition(name="c", source="project", **fields)


def test_model_order_call_definition_inherit_default():
    explore = BUILTIN_AGENTS["Explore"]
    assert resolve_agent_model("opus", explore, PARENT, env={}) == resolve_model("opus", env={})
    assert resolve_agent_model(None, explore, PARENT, env={}) == resolve_model("haiku", env={})
    assert resolve_agent_model(None, BUILTIN_AGENTS["Plan"], PARENT, env={}) == PARENT
    # No model named: the parent's, as Claude Code (it used to be a fixed sonnet here).
    assert resolve_agent_model(None, BUILTIN_AGENTS["general-purpose"], PARENT, env={}) == PARENT
    assert resolve_agent_model("inherit", explore, PARENT, env={}) == PARENT
    assert resolve_agent_model(None, BUILTIN_AGENTS["Plan"], None, env={}) == DEFAULT_SUBAGENT_MODEL


def test_model_aliases_and_unknown_alias():
    assert resolve_agent_model(None, custom(model="fast"), PARENT, aliases={"fast": "claude-x"}) == "claude-x"
    assert resolve_agent_model(None, custom(model="claude-sonnet-4-5"), PARENT) == "claude-sonnet-4-5"
    with pytest.raises(UserError, match="sonet"):
        resolve_agent_model(None, custom(model="sonet"), PARENT)


def tools(definition, *, depth=1, max_depth=3, background=False, available=ALL):
    return resolve_tools(definition, available, depth=depth, max_depth=max_depth, background=background)


def test_team_tools_never_reach_sub_agents():
    assert tools(BUILTIN_AGENTS["general-purpose"]) == [t for t in ALL if not t.startswith("Team")]
    assert "TeamCreate" not in tools(custom())


def test_depth_limit_withholds_agent():
    gp = BUILTIN_AGENTS["general-purpose"]
    assert "Agent" in tools(gp, depth=2, max_depth=3)
    assert "Agent" not in tools(gp, depth=3, max_depth=3)


def test_async_agents_get_only_the_async_set():
    result = tools(custom(), background=True)
    assert result == [t for t in ALL if t in ASYNC_ALLOWED or t.startswith("mcp__")]
    assert "WebFetch" in result and "TeamCreate" not in result  # Claude Code's async set has WebFetch


def test_waiting_on_stopping_tasks_and_leaving_plan_mode_are_for_the_main_agent_only():
    available = [*ALL, "TaskOutput", "TaskStop", "ExitPlanMode"]
    for definition in (BUILTIN_AGENTS["general-purpose"], custom()):
        kept = resolve_tools(definition, available, depth=1, max_depth=3, background=False)
        assert not {"TaskOutput", "TaskStop", "ExitPlanMode"} & set(kept)


def test_disallowed_then_intersect_keeping_order():
    assert tools(BUILTIN_AGENTS["Explore"]) == ["Read", "Glob", "Grep", "Bash", "WebFetch", "mcp__slack__post"]
    assert tools(custom(tools=["Grep", "Read", "Write"], disallowed_tools=["Write"])) == ["Read", "Grep", "mcp__slack__post"]


def test_mcp_tools_always_pass():
    assert tools(custom(tools=["Read"], disallowed_tools=["mcp__slack__post"]), background=True) == ["Read", "mcp__slack__post"]


def test_task_means_agent():
    assert tools(custom(tools=["Task", "Read"]), available=["Read", "Agent", "Bash"]) == ["Read", "Agent"]
    assert tools(custom(disallowed_tools=["Task"]), available=["Read", "Agent"]) == ["Read"]
    assert tools(custom(tools=["Agent(Explore)"]), available=["Read", "Agent"]) == ["Agent"]


def test_no_model_inherits_the_parents_and_a_named_one_is_kept():
    haiku = resolve_model("haiku", env={})
    assert resolve_agent_model(None, custom(), haiku, env={}) == haiku  # a haiku main agent spawns haiku
    assert resolve_agent_model(None, BUILTIN_AGENTS["Explore"], PARENT, env={}) == haiku
    assert resolve_agent_model(None, custom(model="opus"), haiku, env={}) == resolve_model("opus", env={})


def test_the_sub_agent_model_variables_beat_the_call_and_the_definition():
    env = {"CLAUDE_CODE_SUBAGENT_MODEL": "claude-sonnet-4-5"}
    assert resolve_agent_model("opus", BUILTIN_AGENTS["Explore"], PARENT, env=env) == "claude-sonnet-4-5"
    assert resolve_agent_model(None, custom(), PARENT, env=env) == "claude-sonnet-4-5"
    both = {**env, "COVEY_SUBAGENT_MODEL": "haiku", "ANTHROPIC_DEFAULT_HAIKU_MODEL": "my-haiku"}
    assert resolve_agent_model("opus", custom(), PARENT, env=both) == "my-haiku"  # covey's wins, aliases apply
    # "inherit" overrides nothing: the usual order decides.
    assert resolve_agent_model("opus", custom(), PARENT, env={"CLAUDE_CODE_SUBAGENT_MODEL": "inherit"}) == (
        resolve_model("opus", env={}))
    assert subagent_model_override({"COVEY_SUBAGENT_MODEL": " ", "CLAUDE_CODE_SUBAGENT_MODEL": "opus"}) == "opus"


def test_effort_is_the_calls_then_the_definitions_then_the_parents():
    assert child_effort("high", custom(effort="low"), "max") == "high"
    assert child_effort(None, custom(effort="low"), "max") == "low"
    assert child_effort(None, custom(), "max") == "max"
    assert child_effort(None, custom(), None) is None
