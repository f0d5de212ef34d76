import pytest

from covey.agents.builtin import BUILTIN_AGENTS
from covey.agents.definition import AgentDefinition
from covey.agents.resolve import ASYNC_ALLOWED, resolve_agent_model, resolve_tools
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
    assert "WebFetch" not in result


def test_disallowed_then_intersect_keeping_order():
    assert tools(BUILTIN_AGENTS["Explore"]) == ["Read", "Glob", "Grep", "Bash", "WebFetch", "mcp__slack__post"]
    assert tools(custom(tools=["Grep", "Read", "Write"], disallowed_tools=["Write"])) == ["Read", "Grep", "mcp__slack__post"]


def test_mcp_tools_always_pass():
    assert tools(custom(tools=["Read"], disallowed_tools=["mcp__slack__post"]), background=True) == ["Read", "mcp__slack__post"]


def test_task_means_agent():
    assert tools(custom(tools=["Task", "Read"]), available=["Read", "Agent", "Bash"]) == ["Read", "Agent"]
    assert tools(custom(disallowed_tools=["Task"]), available=["Read", "Agent"]) == ["Read"]
    assert tools(custom(tools=["Agent(Explore)"]), available=["Read", "Agent"]) == ["Agent"]
