"""The MCP servers a definition requires are checked by the Agent tool's routing, in the caller's
process, before any child exists: a missing or failed server refuses the launch, naming the server
(no Ray: a registry that must not be reached stands in)."""

from __future__ import annotations

from pathlib import Path

from covey.definitions.builtin import BUILTIN_AGENTS
from covey.definitions.definition import AgentDefinition
from covey.errors import CoveyError
from covey.mcp.manager import MANAGER
from covey.runtime.limits import Limits
from covey.runtime.ports import SessionRuntime
from covey.runtime.spec import AgentSpec, RunSettings
from covey.subagents.agent_tool import AgentTool
from covey.tools.base import ToolContext, ToolServices
from tests.mcp.helpers import stdio

NEEDS = AgentDefinition(name="triager", description="d", mcpServers=["tracker"], source="project")


class _Registry:
    launches = 0

    async def launch(self, *args, **kwargs):
        _Registry.launches += 1
        raise CoveyError("reached the registry")


def _parent(tmp_path: Path, servers: dict) -> AgentSpec:
    runtime = SessionRuntime(session_id="s-routing", registry=_Registry(), mailbox=None,
                             definitions={**BUILTIN_AGENTS, "triager": NEEDS}, limits=Limits.from_env({}),
                             project_context={str(tmp_path): []})
    return AgentSpec(session_id="s-routing", agent_id="a-main", definition=AgentDefinition(name="main", description="m"),
                     prompt="go", model_id="claude-sonnet-4-6", cwd=str(tmp_path), runtime=runtime,
                     tool_names=["Agent"], settings=RunSettings(mcp_servers=servers, env={"MCP_TIMEOUT": "20000"}))


async def _call(parent: AgentSpec):
    tool = AgentTool()
    ctx = ToolContext(agent_id=parent.agent_id, cwd=Path(parent.cwd), services=ToolServices(runtime=parent.runtime, spec=parent))
    return await tool.run(tool.input_model(description="d", prompt="p", subagent_type="triager"), ctx)


async def test_a_required_server_that_failed_refuses_the_launch_naming_it(tmp_path):
    parent = _parent(tmp_path, {"tracker": stdio("--die")})
    held = await MANAGER.attach(parent.session_id, parent.settings.mcp_servers, [], cwd=str(tmp_path), timeout_s=20)
    try:
        before = _Registry.launches
        result = await _call(parent)
        assert result.is_error and "'triager' was not launched" in result.content
        assert "MCP server 'tracker' is not available" in result.content
        assert _Registry.launches == before  # refused at routing: the registry never heard of it
    finally:
        await MANAGER.detach(held)


async def test_a_required_server_that_is_not_configured_refuses_the_launch(tmp_path):
    result = await _call(_parent(tmp_path, {}))
    assert result.is_error and "MCP server 'tracker', which is not configured" in result.content


async def test_a_connected_required_server_lets_the_launch_go_on(tmp_path):
    parent = _parent(tmp_path, {"tracker": stdio()})
    held = await MANAGER.attach(parent.session_id, parent.settings.mcp_servers, [], cwd=str(tmp_path), timeout_s=20)
    try:
        result = await _call(parent)
        assert result.content == "reached the registry"
    finally:
        await MANAGER.detach(held)
