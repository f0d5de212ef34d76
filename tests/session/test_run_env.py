"""A session's env reaches its agents' actors through Ray: the main agent's and a child's Bash see it."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from covey.session import Session
from tests.session.scripts import CHILD, MAIN, agent_call, rule, scripted

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors


def _bash(label: str) -> dict:
    return {"tool_use": {"name": "Bash", "input": {"command": f'echo "{label}=${{FOO:-unset}}"'}}}


async def test_the_main_agent_and_its_child_run_bash_with_the_sessions_env(tmp_path, monkeypatch):
    monkeypatch.delenv("FOO", raising=False)
    model = scripted(
        rule({**CHILD, "last_tool_result_contains": "CHILD_FOO="}, {"text": "child done"}),
        rule(CHILD, _bash("CHILD_FOO")),
        rule({**MAIN, "last_tool_result_contains": "MAIN_FOO="}, {"text": "MAIN_DONE"}),
        rule({**MAIN, "last_tool_result_contains": "child done"}, _bash("MAIN_FOO")),
        rule(MAIN, {"tool_use": agent_call("look around")}),
    )
    (tmp_path / "proj").mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "client-home"), "FOO": "bar"}
    session = Session(cwd=str(tmp_path / "proj"), model=model, env=env, allowed_tools=["Bash"], pool_size=2,
                      max_turns=6, transcript_dir=str(tmp_path / "t"))
    try:
        result = await asyncio.wait_for(session.run("go"), 120)
    finally:
        session.close()
    assert not result.is_error and result.result == "MAIN_DONE"
    seen = json.dumps([event.model_dump() for event in result.events])
    assert "CHILD_FOO=bar" in seen and "MAIN_FOO=bar" in seen
