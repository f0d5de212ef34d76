import asyncio
import os
import stat
import tempfile
import time
from pathlib import Path

import pytest

from covey.tools.base import ToolContext
from covey.tools.bash import MAX_OUTPUT_CHARS, Bash, BashInput

from .conftest import live_members


async def bash(ctx, command, **kw):
    return await Bash().run(BashInput(command=command, **kw), ctx)


async def wait_gone(pgid, within_s=2.0):
    deadline = time.monotonic() + within_s
    while live_members(pgid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return not live_members(pgid)


async def test_runs_in_cwd_and_captures_stdout_and_stderr(ctx, tmp_path):
    result = await bash(ctx, "pwd; echo oops >&2")
    assert not result.is_error
    assert result.content.splitlines() == [str(tmp_path), "oops"]


async def test_nonzero_exit_code_is_reported(ctx):
    result = await bash(ctx, "echo partial; exit 3")
    assert result.is_error and "partial" in result.content and "Exit code 3" in result.content


async def test_output_is_capped_with_a_note(ctx):
    result = await bash(ctx, f"head -c {MAX_OUTPUT_CHARS + 5000} /dev/zero | tr '\\0' a")
    assert result.content.startswith("a" * MAX_OUTPUT_CHARS + "\n")
    assert "5000 more characters cut" in result.content


async def test_timeout_kills_the_whole_group(ctx):
    started = time.monotonic()
    # $$ is the shell's pid, which start_new_session made the group id.
    result = await bash(ctx, "echo $$; sleep 30 & sleep 30", timeout=300)
    assert time.monotonic() - started < 5
    assert result.is_error and "timed out after 300 ms" in result.content
    pgid = int(result.content.splitlines()[0])  # partial output is kept
    assert await wait_gone(pgid)
    assert ctx.processes.live_groups() == []


async def test_abort_kills_the_group_and_says_interrupted(ctx):
    task = asyncio.create_task(bash(ctx, "sleep 30 & sleep 30"))
    await asyncio.sleep(0.3)
    pgid = _only_group(ctx)
    assert live_members(pgid)
    ctx.abort.set()
    result = await asyncio.wait_for(task, 5)
    assert result.is_error and "interrupted" in result.content
    assert await wait_gone(pgid)


async def test_cancelling_the_call_kills_the_group(ctx):
    task = asyncio.create_task(bash(ctx, "sleep 30"))
    await asyncio.sleep(0.3)
    pgid = _only_group(ctx)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(pgid)


async def test_already_aborted_runs_nothing(ctx, tmp_path):
    ctx.abort.set()
    result = await bash(ctx, "touch ran")
    assert result.is_error and "interrupted" in result.content
    assert not (tmp_path / "ran").exists()


async def test_background_writes_to_file_and_dies_at_cleanup(ctx):
    result = await bash(ctx, "echo hello; sleep 30", run_in_background=True)
    assert not result.is_error
    shell = ctx.processes.background[result.data["backgroundTaskId"]]
    assert str(shell.output_path) in result.content
    await asyncio.sleep(0.3)
    assert shell.output_path.read_text() == "hello\n"
    pgid = shell.process.pid
    assert live_members(pgid)
    await ctx.processes.kill_all(grace_s=0.3)
    assert await wait_gone(pgid)


async def test_background_output_is_private_to_the_user(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ctx = ToolContext(agent_id="agent-test", cwd=tmp_path)
    result = await bash(ctx, "echo a secret", run_in_background=True)
    shell = ctx.processes.background[result.data["backgroundTaskId"]]
    await shell.process.wait()
    mine = tmp_path / f"covey-{os.getuid()}"
    assert shell.output_path == mine / "agent-test" / "tasks" / shell.output_path.name
    folders = [mine, mine / "agent-test", mine / "agent-test" / "tasks"]
    assert [stat.S_IMODE(os.stat(p).st_mode) for p in (*folders, shell.output_path)] == [0o700] * 3 + [0o600]


async def test_background_output_in_a_folder_someone_else_made_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / f"covey-{os.getuid()}").symlink_to(tmp_path)  # a planted link to somewhere else
    ctx = ToolContext(agent_id="agent-test", cwd=tmp_path)
    result = await bash(ctx, "touch ran", run_in_background=True)
    assert result.is_error and "symlink" in result.content
    assert not (tmp_path / "ran").exists() and ctx.processes.background == {}


def test_input_rules_and_permission_subject():
    with pytest.raises(ValueError):
        BashInput(command="x", timeout=600_001)
    assert BashInput.model_validate({"command": "x", "dangerouslyDisableSandbox": True}).dangerously_disable_sandbox
    assert Bash().permission_subject(BashInput(command="git status")) == "git status"


def _only_group(ctx) -> int:
    (pgid,) = ctx.processes.live_groups()
    return pgid


# -- the run's environment (ToolContext.env, from the spec's RunSettings.env) ---------------

def _env_ctx(tmp_path, **env):
    return ToolContext(agent_id="agent-test", cwd=tmp_path, env={"PATH": os.environ["PATH"], **env})


async def test_commands_run_with_the_runs_env_not_this_process(tmp_path, monkeypatch):
    monkeypatch.delenv("FOO", raising=False)
    monkeypatch.setenv("SERVICE_ONLY", "leaked")
    result = await bash(_env_ctx(tmp_path, FOO="bar"), 'echo "$FOO" "${SERVICE_ONLY:-unset}"')
    assert result.content.strip() == "bar unset"


async def test_background_commands_run_with_the_runs_env(tmp_path, monkeypatch):
    monkeypatch.delenv("FOO", raising=False)
    ctx = _env_ctx(tmp_path, FOO="bar")
    result = await bash(ctx, 'echo "$FOO"', run_in_background=True)
    shell = ctx.processes.background[result.data["backgroundTaskId"]]
    await shell.process.wait()
    assert shell.output_path.read_text() == "bar\n"


async def test_the_runs_path_finds_the_programs(tmp_path):
    bin_dir = tmp_path / "client-bin"
    bin_dir.mkdir()
    (bin_dir / "client-tool").write_text("#!/bin/sh\necho from the client PATH\n")
    (bin_dir / "client-tool").chmod(0o755)
    ctx = ToolContext(agent_id="agent-test", cwd=tmp_path, env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert (await bash(ctx, "client-tool")).content.strip() == "from the client PATH"


async def test_without_an_env_commands_inherit_this_process(ctx, monkeypatch):
    monkeypatch.setenv("FOO", "from-os-environ")
    assert (await bash(ctx, 'echo "$FOO"')).content.strip() == "from-os-environ"


def test_a_tilde_path_is_the_runs_home(tmp_path):
    ctx = ToolContext(agent_id="agent-test", cwd=tmp_path, env={"HOME": "/client/home"})
    assert ctx.resolve("~/notes.md") == Path("/client/home/notes.md")
    assert ctx.resolve("~") == Path("/client/home")
    assert ToolContext(agent_id="a", cwd=tmp_path).resolve("~/x") == Path.home() / "x"
