"""End to end on the shared local Ray: Claude Code's depth variable limits a real session's spawns,
and a definition's required MCP server that failed refuses the launch at routing (no child record)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from covey.definitions.definition import AgentDefinition
from covey.events import UserEvent
from covey.session import Session
from tests.mcp.helpers import SERVER
from tests.session.scripts import MAIN, agent_call, rule, scripted

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors


def _errors(events) -> list[str]:
    return ["".join(p.get("text", "") for p in b["content"]) if isinstance(b["content"], list) else b["content"]
            for e in events if isinstance(e, UserEvent) and isinstance(e.message.get("content"), list)
            for b in e.message["content"] if b.get("type") == "tool_result" and b.get("is_error")]


async def _run(session: Session):
    try:
        result = await asyncio.wait_for(session.run("go"), 120)
        assert session.runtime is not None
        return result, await session.runtime.registry.records()
    finally:
        session.close()


def _session(tmp_path: Path, model, **options) -> Session:
    (tmp_path / "proj").mkdir(exist_ok=True)
    return Session(cwd=str(tmp_path / "proj"), model=model, transcript_dir=str(tmp_path / "transcripts"),
                   pool_size=2, max_turns=6, **options)


async def test_claude_codes_depth_variable_refuses_a_spawn(tmp_path):
    model = scripted(rule({**MAIN, "last_tool_result_contains": "depth limit"}, {"text": "refused"}),
                     rule(MAIN, {"tool_use": agent_call("x")}))
    env = {**os.environ, "HOME": str(tmp_path / "home"), "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH": "0"}
    env.pop("COVEY_MAX_SUBAGENT_SPAWN_DEPTH", None)
    result, records = await _run(_session(tmp_path, model, env=env))
    assert result.events[-1].result == "refused" and all(r.role == "main" for r in records)


async def test_a_failed_required_server_refuses_the_launch_before_any_child_exists(tmp_path):
    model = scripted(rule({**MAIN, "last_tool_result_contains": "was not launched"}, {"text": "refused"}),
                     rule(MAIN, {"tool_use": agent_call("triage", subagent_type="triager")}))
    triager = AgentDefinition(name="triager", description="Triage issues", prompt="p", mcpServers=["tracker"])
    session = _session(tmp_path, model, agents=[triager],
                       mcp_servers={"tracker": {"command": sys.executable, "args": [SERVER, "--die"]}})
    result, records = await _run(session)
    [error] = _errors(result.events)
    assert "'triager' was not launched" in error and "MCP server 'tracker' is not available" in error
    assert result.events[-1].result == "refused" and all(r.role == "main" for r in records)
