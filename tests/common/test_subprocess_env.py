"""The environment of a run's child processes: its Bash commands, command hooks, stdio MCP
servers, ``rg`` and a hook's env file never get covey's own credentials (the API's key and
tokens, Ray's auth token); with CLAUDE_CODE_SUBPROCESS_ENV_SCRUB on they also go without the
cloud, telemetry and CI secrets; what an MCP server's own config sets is kept."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from covey.hooks.command import run_command
from covey.hooks.config import CommandHook
from covey.hooks.env_file import exported
from covey.mcp.client import McpConnection
from covey.common.subprocess_env import (API_CREDENTIALS, CREDENTIALS, SCRUBBED, api_credentials_hidden, for_subprocess,
                                  scrubbed, without_api_credentials)
from covey.tools.base import ToolContext
from tests.hooks.scripts import py_hook
from tests.mcp.helpers import stdio
from tests.tools.test_bash import bash

KEY = "sk-ant-never-in-a-subprocess"
RAY_TOKEN = "ray-token-never-in-a-subprocess"
OWN = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_AUTH_TOKEN": "auth-token-secret", "CLAUDE_CODE_OAUTH_TOKEN": "oauth-secret",
       "ANTHROPIC_FOUNDRY_API_KEY": "foundry-secret", "ANTHROPIC_CUSTOM_HEADERS": "x-secret: 1",
       "RAY_AUTH_TOKEN": RAY_TOKEN, "RAY_AUTH_TOKEN_PATH": "/home/someone/.ray/auth_token"}


def run_env(scrub: bool) -> dict[str, str]:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **OWN,
           "AWS_SECRET_ACCESS_KEY": "aws-secret", "GITHUB_TOKEN": "gh-kept", "HTTPS_PROXY": "http://proxy:1"}
    return {**env, "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB": "1"} if scrub else env


@pytest.mark.parametrize("scrub", [False, True])
@pytest.mark.parametrize("name", sorted(OWN))
def test_covey_own_credentials_never_reach_a_child(name, scrub):
    assert name not in scrubbed(run_env(scrub))


@pytest.mark.parametrize("name", sorted(SCRUBBED - CREDENTIALS))
def test_the_scrub_flag_leaves_out_the_broader_list(name):
    assert name in scrubbed({name: "secret"})
    assert name not in scrubbed({name: "secret", "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB": "1"})


@pytest.mark.parametrize("scrub", [False, True])
def test_what_is_not_a_secret_stays(scrub):
    left = scrubbed(run_env(scrub))
    assert left["GITHUB_TOKEN"] == "gh-kept" and left["HTTPS_PROXY"] == "http://proxy:1" and left["PATH"]
    assert ("AWS_SECRET_ACCESS_KEY" in left) is not scrub


def test_what_the_person_configured_for_the_child_is_kept():
    own = {"ANTHROPIC_API_KEY": "the server's own key", "RAY_AUTH_TOKEN": "its own", "AWS_SECRET_ACCESS_KEY": "x"}
    left = scrubbed(run_env(True), own=own)
    assert {name: left[name] for name in own} == own


def test_this_process_environment_is_scrubbed_too(monkeypatch):
    monkeypatch.delenv("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("RAY_AUTH_TOKEN", RAY_TOKEN)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws")
    from_here = for_subprocess(None)
    assert "ANTHROPIC_API_KEY" not in from_here and "RAY_AUTH_TOKEN" not in from_here
    assert from_here["AWS_SECRET_ACCESS_KEY"] == "aws"
    monkeypatch.setenv("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "true")
    assert "AWS_SECRET_ACCESS_KEY" not in for_subprocess(None)


def test_a_ray_node_starts_without_the_api_credentials_but_with_ray_s_token(monkeypatch):
    left = without_api_credentials(run_env(False))
    assert not API_CREDENTIALS & left.keys() and left["RAY_AUTH_TOKEN"] == RAY_TOKEN
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with api_credentials_hidden():
        assert "ANTHROPIC_API_KEY" not in os.environ
    assert os.environ["ANTHROPIC_API_KEY"] == KEY  # the driver keeps it


def _leaked(text: str) -> list[str]:
    return [value for value in OWN.values() if value in text]


@pytest.mark.parametrize("scrub", [False, True])
async def test_a_bash_command_sees_neither_the_key_nor_ray_s_token(tmp_path, scrub):
    ctx = ToolContext(agent_id="agent-test", cwd=tmp_path, env=run_env(scrub))
    result = await bash(ctx, 'env; echo "key=${ANTHROPIC_API_KEY:-none} ray=${RAY_AUTH_TOKEN:-none} gh=$GITHUB_TOKEN"')
    assert result.content.strip().endswith("key=none ray=none gh=gh-kept") and not _leaked(result.content)


async def test_a_bash_command_in_the_actor_s_own_environment_is_scrubbed(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("RAY_AUTH_TOKEN", RAY_TOKEN)
    result = await bash(ToolContext(agent_id="agent-test", cwd=tmp_path, env=None), "env")
    assert not _leaked(result.content) and "PATH=" in result.content


@pytest.mark.parametrize("scrub", [False, True])
async def test_a_command_hook_sees_neither_the_key_nor_ray_s_token(tmp_path: Path, scrub):
    out = tmp_path / "env.json"
    command = py_hook(tmp_path, "envdump", f"open({str(out)!r}, 'w').write(json.dumps(dict(os.environ)))\n")
    answer = await run_command(CommandHook(command=command), {"hook_event_name": "PreToolUse"}, cwd=tmp_path,
                               project_dir=tmp_path, env=run_env(scrub))
    assert answer.error is None
    seen = json.loads(out.read_text())
    assert not CREDENTIALS & seen.keys() and seen["CLAUDE_PROJECT_DIR"] == str(tmp_path)
    assert ("AWS_SECRET_ACCESS_KEY" in seen) is not scrub and seen["GITHUB_TOKEN"] == "gh-kept"


async def test_a_hook_s_env_file_is_sourced_without_the_key(tmp_path: Path):
    env_file = tmp_path / "env.sh"
    env_file.write_text('export SEEN="key=${ANTHROPIC_API_KEY:-none} ray=${RAY_AUTH_TOKEN:-none}"\n')
    assert (await exported(env_file, run_env(False)))["SEEN"] == "key=none ray=none"


@pytest.mark.parametrize("scrub", [False, True])
async def test_a_stdio_mcp_server_sees_neither_unless_its_config_sets_them(tmp_path, scrub):
    config_env = {"OWN": "the server's own", "ANTHROPIC_AUTH_TOKEN": "written by the person"}
    connection = McpConnection("demo", stdio(env=config_env), cwd=str(tmp_path), env=run_env(scrub)).start()
    try:
        assert await connection.wait(60)
        seen = {name: (await connection.call("getenv", {"name": name})).content[0].text
                for name in ("ANTHROPIC_API_KEY", "RAY_AUTH_TOKEN", "OWN", "ANTHROPIC_AUTH_TOKEN")}
    finally:
        await connection.close()
    assert seen == {"ANTHROPIC_API_KEY": "<unset>", "RAY_AUTH_TOKEN": "<unset>", "OWN": "the server's own",
                    "ANTHROPIC_AUTH_TOKEN": "written by the person"}


FORGET = """
import os, subprocess
from covey.common.subprocess_env import forget_api_credentials_in_proc
zeroed = forget_api_credentials_in_proc()
shown = open("/proc/self/environ", "rb").read()
inherited = subprocess.run(["sh", "-c", "echo $ANTHROPIC_API_KEY"], capture_output=True, text=True).stdout.strip()
print(zeroed, b"%s" in shown, b"KEEP=kept" in shown, os.environ["ANTHROPIC_API_KEY"] == "%s", inherited == "%s")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux alone says where the environment block lies")
def test_a_process_zeroes_the_key_in_what_proc_shows_and_keeps_it_for_itself_and_its_children():
    import subprocess

    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "KEEP": "kept"}
    code = FORGET % (KEY, KEY, KEY)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["1", "False", "True", "True", "True"], done.stderr


def test_elsewhere_than_linux_the_environment_block_is_left_alone(monkeypatch):
    """macOS shows a process's environment too, but names no bounds for it: covey writes nowhere
    and says it zeroed nothing; the process keeps its key."""
    import covey.common.subprocess_env as subprocess_env

    monkeypatch.setattr(subprocess_env.sys, "platform", "darwin")
    monkeypatch.setattr(subprocess_env, "ctypes", None)  # reading or writing memory would raise
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert subprocess_env.forget_api_credentials_in_proc() == 0
    assert os.environ["ANTHROPIC_API_KEY"] == KEY
