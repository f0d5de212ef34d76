"""Fork children without Ray: the switch, the schema, the guard both ways, the history a
fork inherits, and the spec it gets (its parent's system bytes and tools array)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from covey.definitions.definition import AgentDefinition
from covey.subagents.fork import (
    FORK_QUERY_SOURCE, FORK_REFUSAL, CacheSafeParams, fork_directive, fork_enabled, fork_spec, in_fork_child,
    without_incomplete_tool_calls,
)
from covey.agent.catalog import tool_catalog
from covey.errors import ModelBehaviorError
from covey.model.scripted import ScriptedModel
from covey.permissions.policy import PermissionPolicy
from covey.runtime.ports import SessionRuntime
from covey.runtime.spec import AgentSpec, RunSettings
from covey.session import Session, main_agent
from covey.settings.merged import Settings
from covey.subagents.agent_schema import agent_input_model
from covey.subagents.agent_tool import AgentTool
from covey.subagents.launch import Launch
from covey.tools.base import ToolContext, ToolServices
from covey.tools.options import ToolOptions

SYSTEM = [{"type": "text", "text": "PARENT SYSTEM"}, {"type": "text", "text": "<env>cwd</env>"}]


def _history(*, text_before_calls: bool = False) -> list[dict]:
    """A parent mid-turn: one finished Read, then a message of two Agent calls with no results yet."""
    calls = [{"type": "tool_use", "id": f"toolu_f{i}", "name": "Agent", "input": {"description": "d", "prompt": f"part {i}"}}
             for i in (1, 2)]
    last = ([{"type": "text", "text": "Splitting the work."}] if text_before_calls else []) + calls
    return [
        {"role": "user", "content": "PARENT_TASK"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_r", "name": "Read", "input": {"file_path": "/a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_r", "content": "file text"}]},
        {"role": "assistant", "content": last},
    ]


def _parent(tmp_path: Path, **update) -> AgentSpec:
    runtime = SessionRuntime(session_id="s", registry=None, mailbox=None, can_ask=True, tools=ToolOptions(fork=True))
    spec = AgentSpec(
        session_id="s", agent_id="agent-parent", definition=AgentDefinition(name="main"), prompt="PARENT_TASK",
        model="scripted:x", model_id="claude-opus-4-6", effort="high", thinking={"type": "enabled", "budget_tokens": 2048},
        cwd=str(tmp_path), system=SYSTEM, tool_names=["Read", "Bash", "Agent"], runtime=runtime,
        permissions=PermissionPolicy(mode="default", project_root=tmp_path), settings=RunSettings(can_ask=True),
    )
    return spec.model_copy(update=update)


def _params(**update) -> CacheSafeParams:
    tools = [tool.schema() for tool in tool_catalog(ToolOptions(fork=True)) if tool.name in ("Read", "Bash", "Agent")]
    fields = dict(system=list(SYSTEM), tools=tools, messages=_history(), thinking={"type": "enabled", "budget_tokens": 2048},
                  read_files={"/a": 1.0})
    return CacheSafeParams(**{**fields, **update})


# -- the switch and the schema ------------------------------------------------------


@pytest.mark.parametrize("env, setting, settings_env, on", [
    ({}, None, None, False),
    ({"COVEY_FORK_SUBAGENT": "1"}, None, None, True),
    ({"CLAUDE_CODE_FORK_SUBAGENT": "true"}, None, None, True),
    ({}, None, {"CLAUDE_CODE_FORK_SUBAGENT": "1"}, True),
    ({"COVEY_FORK_SUBAGENT": "1"}, False, None, False),
    ({}, True, None, True),
    ({"COVEY_FORK_SUBAGENT": "1", "COVEY_COORDINATOR_MODE": "1"}, None, None, False),
    ({}, True, {"CLAUDE_CODE_COORDINATOR_MODE": "1"}, False),
])
def test_forking_is_on_by_either_switch_or_the_setting_and_never_in_coordinator_mode(env, setting, settings_env, on):
    assert fork_enabled(env, setting, settings_env) is on


def test_the_fork_subagent_setting_is_read_from_a_settings_file(tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"forkSubagent": True}))
    assert Settings.load(tmp_path, home=tmp_path / "home").fork_subagent is True
    session = Session(cwd=str(tmp_path), model=ScriptedModel(), env={"HOME": str(tmp_path / "home")})
    assert main_agent.tool_options(session.config).fork


def test_with_forking_on_the_schema_has_no_run_in_background_and_the_prompt_says_when_to_fork():
    forking, plain = AgentTool(fork=True), AgentTool()
    assert "run_in_background" not in forking.schema()["input_schema"]["properties"]
    assert "run_in_background" in plain.schema()["input_schema"]["properties"]
    assert "Omit it to fork" in forking.schema()["input_schema"]["properties"]["subagent_type"]["description"]
    assert "is a fork of you" in forking.description and "fork" not in plain.description
    assert "run_in_background" not in forking.description
    # static per configuration: the cached prefix does not move between two builds
    assert json.dumps(AgentTool(fork=True).schema()) == json.dumps(forking.schema())
    assert agent_input_model(fork=True) is agent_input_model(fork=True)
    agent = next(t for t in tool_catalog(ToolOptions(fork=True)) if t.name == "Agent")
    assert "run_in_background" not in agent.schema()["input_schema"]["properties"]


def test_permission_rules_name_a_fork_agent_fork(tmp_path):
    """``Agent(fork)`` in a deny rule refuses forks; the legacy default type stays for plain calls."""
    forking, plain = AgentTool(fork=True), AgentTool()
    assert forking.permission_subject(forking.input_model(description="d", prompt="p")) == "fork"
    assert forking.permission_subject(forking.input_model(description="d", prompt="p", subagent_type="Explore")) == "Explore"
    assert plain.permission_subject(plain.input_model(description="d", prompt="p")) == "general-purpose"
    policy = PermissionPolicy(mode="default", deny=[_rule("Agent(fork)")], project_root=tmp_path)
    assert type(policy.decide("Agent", True, "fork", {})).__name__ == "Deny"
    assert type(policy.decide("Agent", True, "Explore", {})).__name__ != "Deny"


def _rule(text: str):
    from covey.permissions.rules import parse_rule

    return parse_rule(text, source="test", behavior="deny")


# -- the history a fork inherits ------------------------------------------------------


def test_incomplete_tool_calls_are_removed_and_an_assistant_message_left_empty_is_dropped():
    kept = without_incomplete_tool_calls(_history())
    assert [m["role"] for m in kept] == ["user", "assistant", "user"]  # the pending Agent calls' message is gone
    assert kept[1]["content"][0]["id"] == "toolu_r"  # a call with its result stays


def test_text_before_pending_calls_stays_and_the_parent_history_is_not_changed():
    history = _history(text_before_calls=True)
    kept = without_incomplete_tool_calls(history)
    assert kept[-1] == {"role": "assistant", "content": [{"type": "text", "text": "Splitting the work."}]}
    assert len(history[-1]["content"]) == 3  # a copy: the parent's own message keeps its calls
    kept[0]["content"] = "changed"
    assert history[0]["content"] == "PARENT_TASK"


# -- the guard, both ways ---------------------------------------------------------------


def test_the_guard_sees_the_query_source_and_falls_back_to_the_boilerplate_in_the_history(tmp_path):
    directive = {"role": "user", "content": fork_directive("do one thing")}
    assert in_fork_child(_parent(tmp_path, query_source=FORK_QUERY_SOURCE), [])
    assert in_fork_child(_parent(tmp_path), [*_history(), directive])  # query source lost: the tag tells
    assert not in_fork_child(_parent(tmp_path), _history())
    # the tag inside a tool input (the parent's own Agent call quoting it) is not a fork's history
    quoted = {"role": "assistant", "content": [{"type": "text", "text": "<fork-boilerplate>"}]}
    reported = {"role": "user", "content": [{"type": "text", "text": "<task-notification>a fork said <fork-boilerplate>"}]}
    assert not in_fork_child(_parent(tmp_path), [quoted, reported])


@pytest.mark.parametrize("how", ["query_source", "history"])
async def test_a_fork_inside_a_fork_is_refused_with_an_error_result(tmp_path, how):
    parent = _parent(tmp_path, query_source=FORK_QUERY_SOURCE if how == "query_source" else None)
    messages = [*_history(), {"role": "user", "content": fork_directive("x")}] if how == "history" else _history()
    ctx = ToolContext(agent_id=parent.agent_id, cwd=tmp_path, services=ToolServices(
        runtime=parent.runtime, spec=parent, cache_safe=lambda: _params(messages=messages)))
    tool = AgentTool(fork=True)
    result = await tool.run(tool.input_model(description="again", prompt="fork again"), ctx)
    assert result.is_error and result.content == FORK_REFUSAL


async def test_a_fork_launched_without_its_parents_conversation_is_refused_not_a_crash(tmp_path):
    parent = _parent(tmp_path)
    ctx = ToolContext(agent_id=parent.agent_id, cwd=tmp_path, services=ToolServices(runtime=parent.runtime, spec=parent))
    tool = AgentTool(fork=True)
    call = tool.input_model(description="d", prompt="look")
    with pytest.raises(ModelBehaviorError, match="needs the calling agent's conversation"):
        await Launch(call, ctx, parent, parent.runtime, fork=True)._spec(None)
    result = await tool.run(call, ctx)
    assert result.is_error and "needs the calling agent's conversation" in result.content


# -- the spec a fork gets ---------------------------------------------------------------


def test_a_fork_gets_its_parents_system_bytes_tools_array_model_and_thinking(tmp_path):
    parent, params = _parent(tmp_path), _params()
    call = agent_input_model(fork=True)(description="part one", prompt="PART_ONE")
    spec = fork_spec(parent, params, call, agent_id="agent-f1", tool_use_id="toolu_f1")
    assert json.dumps(spec.system) == json.dumps(params.system)
    assert json.dumps(spec.exact_tools) == json.dumps(params.tools)
    assert "Agent" in spec.tool_names and spec.tool_names == parent.tool_names  # exact: the Agent tool kept
    assert spec.inherited == without_incomplete_tool_calls(params.messages)
    assert spec.prompt.startswith("<fork-boilerplate>") and spec.prompt.endswith("Your directive: PART_ONE")
    assert (spec.model_id, spec.effort, spec.thinking) == (parent.model_id, "high", params.thinking)
    assert spec.permissions.mode == "bubble" and spec.settings.can_ask  # its prompts reach the root
    assert (spec.max_turns, spec.background, spec.depth, spec.definition.name) == (200, True, 1, "fork")
    assert spec.query_source == FORK_QUERY_SOURCE and spec.read_files == {"/a": 1.0}
    params.read_files["/b"] = 2.0
    assert "/b" not in spec.read_files  # a copy of the parent's cache, not the cache itself


def test_a_fork_ignores_the_calls_model_it_inherits_its_parents_for_the_cache(tmp_path):
    call = agent_input_model(fork=True)(description="d", prompt="p", model="haiku")
    assert fork_spec(_parent(tmp_path), _params(), call, agent_id="agent-f", tool_use_id=None).model_id == "claude-opus-4-6"
