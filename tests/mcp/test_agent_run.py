"""``run_agent`` with MCP servers (no Ray): the model calls ``mcp__…`` tools, permission rules
on them are obeyed, and an inline server stops with its agent."""

from __future__ import annotations

import json

from covey.agent.lifecycle import AgentServices, run_agent
from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.permissions.policy import PermissionPolicy
from covey.permissions.rules import parse_rule
from covey.runtime.spec import AgentSpec, RunSettings
from tests.mcp.helpers import SERVER, alive, stdio


def _spec(tmp_path, *, servers=None, definition=None, deny=()) -> AgentSpec:
    policy = PermissionPolicy(mode="bypassPermissions", project_root=tmp_path,
                              deny=[parse_rule(r, source="cliArg", root=tmp_path, behavior="deny") for r in deny])
    return AgentSpec(
        session_id="s", agent_id="a-1", definition=definition or AgentDefinition(name="main", description="main"),
        prompt="go", model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=["Read"], max_turns=5,
        transcript_dir=str(tmp_path / "t"), permissions=policy, settings=RunSettings(mcp_servers=servers or {}),
    )


async def _results(spec: AgentSpec, calls: list[tuple[str, dict]]) -> tuple[list[dict], ScriptedModel]:
    model = ScriptedModel.from_turns([
        {"tool_use": [{"name": name, "input": args} for name, args in calls]},
        {"text": "done"},
    ])
    events = [event async for event in run_agent(spec, AgentServices(model=model))]
    blocks = [b for e in events if getattr(e, "type", None) == "user" and isinstance(e.message.get("content"), list)
              for b in e.message["content"] if b.get("type") == "tool_result"]
    return blocks, model


async def test_the_model_sees_and_calls_mcp_tools_and_a_deny_rule_is_obeyed(tmp_path):
    spec = _spec(tmp_path, servers={"demo": stdio()}, deny=["mcp__demo__getenv"])
    blocks, model = await _results(spec, [("mcp__demo__add", {"a": 20, "b": 22}), ("mcp__demo__getenv", {"name": "HOME"})])
    sent = {tool["name"] for tool in model.requests[0].tools}
    assert {"Read", "mcp__demo__add", "mcp__demo__getenv"} <= sent
    add, getenv = blocks
    assert add["content"] == "42" and not add.get("is_error")
    assert getenv["is_error"] and "mcp__demo__getenv" in json.dumps(getenv) and "denied" in json.dumps(getenv).lower()


async def test_a_failing_server_is_reported_as_an_event_and_the_agent_goes_on(tmp_path):
    spec = _spec(tmp_path, servers={"broken": stdio("--die"), "demo": stdio()})
    model = ScriptedModel.from_turns([{"tool_use": [{"name": "mcp__demo__add", "input": {"a": 1, "b": 2}}]}, {"text": "ok"}])
    events = [event async for event in run_agent(spec, AgentServices(model=model))]
    [failed] = [e for e in events if getattr(e, "subtype", None) == "mcp_server_failed"]
    assert failed.server == "broken" and "cannot open its database" in failed.message
    assert failed.wire()["type"] == "system"
    assert events[-1].subtype == "success" and "3" in json.dumps([e.wire() for e in events])


async def test_a_server_wide_deny_rule_covers_all_its_tools(tmp_path):
    spec = _spec(tmp_path, servers={"demo": stdio()}, deny=["mcp__demo"])
    [add], _ = await _results(spec, [("mcp__demo__add", {"a": 1, "b": 1})])
    assert add["is_error"]


async def test_an_inline_server_of_a_definition_is_gone_when_the_agent_ends(tmp_path):
    pidfile = tmp_path / "pid"
    definition = AgentDefinition(name="helper", description="h", mcpServers=[
        {"own": {"command": stdio().command, "args": [SERVER, "--pidfile", str(pidfile)]}}])
    [whoami], _ = await _results(_spec(tmp_path, definition=definition), [("mcp__own__whoami", {})])
    pid = int(pidfile.read_text())
    assert f"pid={pid}" in whoami["content"]
    assert not alive(pid)
