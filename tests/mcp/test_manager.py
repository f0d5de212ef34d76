"""The MCP manager against a real SDK server (stdio and streamable HTTP), without Ray."""

from __future__ import annotations

import pytest

from covey.mcp.manager import McpManager, McpServerUnavailable
from tests.mcp.helpers import SERVER, alive, free_port, start_http_server, stdio


def _tool(held, name):
    return next(tool for tool in held.tools if tool.name == name)


async def test_a_session_server_lists_and_calls_its_tools(tmp_path):
    manager = McpManager()
    held = await manager.attach("s", {"demo": stdio()}, [], cwd=str(tmp_path), timeout_s=20)
    try:
        names = {tool.name for tool in held.tools}
        assert {"mcp__demo__add", "mcp__demo__getenv", "mcp__demo__fail"} <= names
        add = _tool(held, "mcp__demo__add")
        assert add.schema()["input_schema"]["required"] == ["a", "b"]
        result = await add.run(add.input_model(a=2, b=40), None)
        assert (result.content, result.is_error) == ("42", False)
        failed = await _tool(held, "mcp__demo__fail").run(add.input_model(reason="no"), None)
        assert failed.is_error
        image = await _tool(held, "mcp__demo__pixel").run(add.input_model(), None)
        assert image.blocks[0]["type"] == "image" and image.blocks[0]["source"]["media_type"] == "image/png"
        assert manager.statuses("s")[0]["status"] == "connected"
    finally:
        await manager.detach(held)
    assert manager.statuses("s") == []


async def test_agents_of_one_process_share_a_session_server_until_the_last_ends(tmp_path):
    manager = McpManager()
    pidfile = tmp_path / "pid"
    first = await manager.attach("s", {"demo": stdio("--pidfile", str(pidfile))}, [], cwd=str(tmp_path), timeout_s=20)
    second = await manager.attach("s", {"demo": stdio("--pidfile", str(pidfile))}, ["demo"], cwd=str(tmp_path))
    pid = int(pidfile.read_text())
    assert _tool(first, "mcp__demo__whoami").connection is _tool(second, "mcp__demo__whoami").connection
    await manager.detach(first)
    assert alive(pid)
    await manager.detach(second)
    assert not alive(pid)


async def test_an_inline_server_is_the_agents_own_and_stops_with_it(tmp_path):
    manager = McpManager()
    pidfile = tmp_path / "pid"
    inline = {"mine": {"command": stdio().command, "args": [SERVER, "--pidfile", str(pidfile)]}}
    held = await manager.attach("s", {}, [inline], cwd=str(tmp_path), timeout_s=20)
    pid = int(pidfile.read_text())
    assert alive(pid) and "mcp__mine__add" in {tool.name for tool in held.tools}
    assert manager.statuses("s") == []  # not a session server
    await manager.detach(held)
    assert not alive(pid)


async def test_config_env_is_expanded_and_reaches_the_server(tmp_path):
    manager = McpManager()
    inline = {"e": {"command": stdio().command, "args": [SERVER],
                    "env": {"GREETING": "${COVEY_TEST_GREETING:-fallback}", "NAME": "${COVEY_TEST_NAME}"}}}
    held = await manager.attach("s", {}, [inline], cwd=str(tmp_path), env={"COVEY_TEST_NAME": "ada", "PATH": "/usr/bin"},
                                timeout_s=20)
    try:
        getenv = _tool(held, "mcp__e__getenv")
        assert (await getenv.run(getenv.input_model(name="GREETING"), None)).content == "fallback"
        assert (await getenv.run(getenv.input_model(name="NAME"), None)).content == "ada"
    finally:
        await manager.detach(held)


async def test_a_server_that_fails_to_start_is_reported_and_the_agent_goes_on(tmp_path):
    manager = McpManager()
    held = await manager.attach("s", {"broken": stdio("--die"), "demo": stdio()}, [], cwd=str(tmp_path), timeout_s=20)
    try:
        [(name, problem)] = held.failures
        assert name == "broken" and "'broken'" in problem and "cannot open its database" in problem
        assert {tool.name for tool in held.tools} >= {"mcp__demo__add"}
    finally:
        await manager.detach(held)


async def test_a_required_server_that_does_not_connect_in_time_fails_the_agent(tmp_path):
    manager = McpManager()
    with pytest.raises(McpServerUnavailable, match="requires MCP server 'slow'.*did not connect within 0.5 s"):
        await manager.attach("s", {"slow": stdio("--hang")}, ["slow"], cwd=str(tmp_path), timeout_s=0.5)
    assert manager.statuses("s") == []  # what it started is stopped again


async def test_a_definition_naming_an_unconfigured_server_fails_clearly(tmp_path):
    with pytest.raises(McpServerUnavailable, match="names MCP server 'nope', which is not configured"):
        await McpManager().attach("s", {}, ["nope"], cwd=str(tmp_path))


async def test_a_server_that_dies_is_reported_on_the_next_call(tmp_path):
    manager = McpManager()
    pidfile = tmp_path / "pid"
    held = await manager.attach("s", {"demo": stdio("--pidfile", str(pidfile))}, [], cwd=str(tmp_path), timeout_s=20)
    try:
        import os
        import signal

        os.kill(int(pidfile.read_text()), signal.SIGKILL)
        add = _tool(held, "mcp__demo__add")
        result = await add.run(add.input_model(a=1, b=1), None)
        assert result.is_error and "mcp__demo__add failed" in result.content and "'demo' is not available" in result.content
        again = await add.run(add.input_model(a=1, b=1), None)
        assert again.is_error and "'demo' is not available" in again.content
        assert manager.statuses("s")[0]["status"] == "failed"
    finally:
        await manager.detach(held)


async def test_streamable_http_server(tmp_path):
    port = free_port()
    process = start_http_server(port)
    try:
        manager = McpManager()
        config = {"web": {"type": "http", "url": "http://127.0.0.1:${COVEY_TEST_PORT}/mcp"}}
        held = await manager.attach("s", {}, [config], cwd=str(tmp_path), env={"COVEY_TEST_PORT": str(port)},
                                    timeout_s=20)
        try:
            add = _tool(held, "mcp__web__add")
            assert (await add.run(add.input_model(a=1, b=2), None)).content == "3"
        finally:
            await manager.detach(held)
    finally:
        process.kill()
        process.wait()


async def test_resources_are_listed_and_read_with_claude_codes_tools(tmp_path):
    manager = McpManager()
    held = await manager.attach("s", {"demo": stdio()}, [], cwd=str(tmp_path), timeout_s=20)
    try:
        listing, read = _tool(held, "ListMcpResourcesTool"), _tool(held, "ReadMcpResourceTool")
        listed = await listing.run(listing.input_model(), None)
        assert '"uri": "notes://today"' in listed.content and '"server": "demo"' in listed.content
        text = await read.run(read.input_model(server="demo", uri="notes://today"), None)
        assert "ship the MCP support" in text.content
        unknown = await read.run(read.input_model(server="nope", uri="x://y"), None)
        assert unknown.is_error and "'nope'" in unknown.content
    finally:
        await manager.detach(held)
