"""End to end on Ray: a project's ``.mcp.json`` server for the main agent, an agent definition's
inline server for its child, a deny rule on one MCP tool, and the inline server gone with the child."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from covey.session import Session
from tests.mcp.helpers import SERVER, alive
from tests.session.scripts import CHILD, MAIN, agent_call, rule, scripted
from tests.trusting import trust

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project, pidfile = tmp_path / "proj", tmp_path / "own.pid"
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"shared": {
        "command": sys.executable, "args": [SERVER], "env": {"WHO": "${COVEY_E2E_WHO:-the project}"}}}}))
    (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {
        "allow": ["Agent", "mcp__shared", "mcp__own"], "deny": ["mcp__shared__getenv"]}}))
    (project / ".claude" / "agents" / "mcp-user.md").write_text(
        "---\nname: mcp-user\ndescription: Uses its own MCP server\nmcpServers:\n"
        f"  - own:\n      command: {sys.executable}\n      args: [{SERVER}, --pidfile, {pidfile}]\n"
        "---\nYou call your server's tools.\n")
    trust(Path.home(), project, mcp=["shared"])  # the person approved the project's server
    return project, pidfile


async def test_main_and_child_call_their_servers_and_the_inline_one_stops_with_the_child(tmp_path):
    project, pidfile = _project(tmp_path)
    model = scripted(
        rule({**CHILD, "last_tool_result_contains": "pid="}, {"text": "child saw its server"}),
        rule(CHILD, {"tool_use": [{"name": "mcp__own__whoami", "input": {}}]}),
        rule({**MAIN, "last_tool_result_contains": "child saw"}, {"text": "all done"}),
        rule({**MAIN, "last_tool_result_contains": "42"}, {"tool_use": [agent_call("USE_YOUR_SERVER", subagent_type="mcp-user")]}),
        rule(MAIN, {"tool_use": [{"name": "mcp__shared__add", "input": {"a": 40, "b": 2}},
                                 {"name": "mcp__shared__getenv", "input": {"name": "WHO"}}]}),
    )
    session = Session(cwd=str(project), model=model, transcript_dir=str(tmp_path / "t"), pool_size=2, max_turns=6)
    try:
        result = await asyncio.wait_for(session.run("go"), 120)
    finally:
        session.close()
    assert result.result == "all done"
    # As Claude Code's system/init: the project's server connected at the first turn, with its scope and tools.
    init = session.init_event()
    assert init.mcp_servers == [{"name": "shared", "status": "connected", "source": "project"}]
    assert {"mcp__shared__add", "mcp__shared__getenv"} <= set(init.tools)
    pid = int(pidfile.read_text())
    assert not alive(pid)  # the child's inline server stopped with the child
    from covey.transcripts.session_files import project_folder
    from covey.transcripts.transcript import read_transcript, transcript_path

    main = transcript_path(project_folder(tmp_path / "t", session.cwd), session.session_id, session.main_agent_id,
                           main=True)
    results = [b for r in read_transcript(main) if isinstance(r["message"].get("content"), list)
               for b in r["message"]["content"] if b.get("type") == "tool_result"]
    assert results[0]["content"] == "42"
    assert results[1]["is_error"] and "the project" not in json.dumps(results[1])  # denied: never ran
    assert "child saw its server" in json.dumps(results[2])
