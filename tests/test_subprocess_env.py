"""CLAUDE_CODE_SUBPROCESS_ENV_SCRUB: with it on, a run's Bash commands, command hooks and stdio
MCP servers start without the credentials covey reads (a model-written ``echo $ANTHROPIC_API_KEY``
prints nothing); without it they get the run's environment as it is, as in Claude Code."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from covey.hooks.command import run_command
from covey.hooks.config import CommandHook
from covey.mcp.client import McpConnection
from covey.subprocess_env import SCRUBBED, for_subprocess, scrubbed
from covey.tools.base import ToolContext
from tests.hooks.scripts import py_hook
from tests.mcp.helpers import stdio
from tests.tools.test_bash import bash

KEY = "sk-ant-never-in-a-subprocess"


def run_env(scrub: bool) -> dict[str, str]:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), "ANTHROPIC_API_KEY": KEY,
           "AWS_SECRET_ACCESS_KEY": "aws-secret", "GITHUB_TOKEN": "gh-kept", "HTTPS_PROXY": "http://proxy:1"}
    return {**env, "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB": "1"} if scrub else env


def test_the_scrub_leaves_out_credentials_only_and_only_when_asked(monkeypatch):
    assert scrubbed(run_env(False)) == run_env(False)
    left = scrubbed(run_env(True))
    assert "ANTHROPIC_API_KEY" not in left and "AWS_SECRET_ACCESS_KEY" not in left
    assert left["GITHUB_TOKEN"] == "gh-kept" and left["HTTPS_PROXY"] == "http://proxy:1" and left["PATH"]
    assert {"ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"} <= SCRUBBED
    monkeypatch.delenv("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", raising=False)
    assert for_subprocess(None) is None  # this process's environment, inherited as it is
    monkeypatch.setenv("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "true")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    from_here = for_subprocess(None)
    assert from_here is not None and "ANTHROPIC_API_KEY" not in from_here


@pytest.mark.parametrize("scrub", [False, True])
async def test_a_bash_command_sees_the_key_only_without_the_scrub(tmp_path, scrub):
    ctx = ToolContext(agent_id="agent-test", cwd=tmp_path, env=run_env(scrub))
    result = await bash(ctx, 'echo "key=${ANTHROPIC_API_KEY:-none} gh=$GITHUB_TOKEN"')
    assert result.content.strip() == ("key=none gh=gh-kept" if scrub else f"key={KEY} gh=gh-kept")


@pytest.mark.parametrize("scrub", [False, True])
async def test_a_command_hook_sees_the_key_only_without_the_scrub(tmp_path: Path, scrub):
    out = tmp_path / "env.json"
    command = py_hook(tmp_path, "envdump", f"open({str(out)!r}, 'w').write(json.dumps(dict(os.environ)))\n")
    answer = await run_command(CommandHook(command=command), {"hook_event_name": "PreToolUse"}, cwd=tmp_path,
                               project_dir=tmp_path, env=run_env(scrub))
    assert answer.error is None
    seen = json.loads(out.read_text())
    assert ("ANTHROPIC_API_KEY" in seen) is not scrub and seen["CLAUDE_PROJECT_DIR"] == str(tmp_path)


@pytest.mark.parametrize("scrub", [False, True])
async def test_a_stdio_mcp_server_sees_the_key_only_without_the_scrub(tmp_path, scrub):
    connection = McpConnection("demo", stdio(env={"OWN": "the server's own"}), cwd=str(tmp_path),
                               env=run_env(scrub)).start()
    try:
        assert await connection.wait(60)
        key = await connection.call("getenv", {"name": "ANTHROPIC_API_KEY"})
        own = await connection.call("getenv", {"name": "OWN"})
    finally:
        await connection.close()
    assert key.content[0].text == ("<unset>" if scrub else KEY)
    assert own.content[0].text == "the server's own"  # what the server's config sets is kept
