"""Background Bash: its id and output file, TaskOutput while it runs and after, TaskStop, the
completion notice, and the kill at the agent's end (ProcessTracker)."""

import asyncio
import json
import re

from covey.teams.render import render_notice
from covey.tools.bash import Bash, BashInput
from covey.tools.shells import TaskOutput, TaskOutputInput, TaskStop, TaskStopInput

from .conftest import live_members


async def start(ctx, command, **kw):
    result = await Bash().run(BashInput(command=command, run_in_background=True, **kw), ctx)
    assert not result.is_error
    return result, ctx.processes.background[result.data["backgroundTaskId"]]


async def output(ctx, task_id, **kw):
    return await TaskOutput().run(TaskOutputInput(task_id=task_id, **kw), ctx)


async def until(predicate, within_s=5.0):
    for _ in range(int(within_s / 0.05)):
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return predicate()


async def test_background_bash_answers_at_once_as_claude_code_does(ctx):
    result, shell = await start(ctx, "sleep 30", description="Wait a while")
    assert re.fullmatch(r"b[0-9a-z]{8}", shell.shell_id)
    assert result.content.startswith(f"Command running in background with ID: {shell.shell_id}. "
                                      f"Output is being written to: {shell.output_path}.")
    assert shell.output_path.name == f"{shell.shell_id}.output" and shell.output_path.parent.name == "tasks"
    await ctx.processes.kill_all(grace_s=0.2)


async def test_output_is_readable_while_it_runs_then_complete_with_the_exit_code(ctx, tmp_path):
    (tmp_path / "go").touch()
    result, shell = await start(ctx, "echo first; while [ -e go ]; do sleep 0.05; done; echo second; exit 3")
    assert await until(lambda: shell.output_path.read_text() == "first\n")
    running = await output(ctx, shell.shell_id, block=False)
    assert not running.is_error
    assert running.content.split("\n\n")[:4] == ["<retrieval_status>not_ready</retrieval_status>",
                                                 f"<task_id>{shell.shell_id}</task_id>", "<task_type>local_bash</task_type>",
                                                 "<status>running</status>"]
    assert "<output>\nfirst\n</output>" in running.content
    waited = await output(ctx, shell.shell_id, timeout=100)
    assert "<retrieval_status>timeout</retrieval_status>" in waited.content
    (tmp_path / "go").unlink()
    done = await output(ctx, shell.shell_id, timeout=5000)
    assert "<retrieval_status>success</retrieval_status>" in done.content
    assert "<status>failed</status>" in done.content and "<exit_code>3</exit_code>" in done.content
    assert "first\nsecond" in done.content


async def test_an_ended_shell_leaves_a_task_notification_once(ctx):
    result, shell = await start(ctx, "echo hi", description="Say hi")
    await output(ctx, shell.shell_id, timeout=5000)
    (taken,) = ctx.processes.take_notices()
    assert (taken.task_type, taken.status, taken.result, taken.usage) == ("local_bash", "completed", None, None)
    notice = render_notice(taken)  # the text the loop hands the model
    assert f"<task-id>{shell.shell_id}</task-id>" in notice and "<status>completed</status>" in notice
    assert '<summary>Background command "Say hi" completed (exit code 0)</summary>' in notice
    assert f"<output-file>{shell.output_path}</output-file>" in notice
    assert ctx.processes.take_notices() == []


async def test_task_stop_kills_the_whole_group_and_notifies_nothing(ctx):
    result, shell = await start(ctx, "sleep 30 & sleep 30")
    await asyncio.sleep(0.2)
    pgid = shell.process.pid
    stopped = await TaskStop().run(TaskStopInput(task_id=shell.shell_id), ctx)
    assert not stopped.is_error
    assert json.loads(stopped.content) == {"message": f"Successfully stopped task: {shell.shell_id} (sleep 30 & sleep 30)",
                                           "task_id": shell.shell_id, "task_type": "local_bash"}
    assert await until(lambda: not live_members(pgid))
    assert "<status>killed</status>" in (await output(ctx, shell.shell_id)).content
    assert ctx.processes.take_notices() == []
    again = await TaskStop().run(TaskStopInput(shell_id=shell.shell_id), ctx)  # the old field still works
    assert again.is_error and "not running (status: killed)" in again.content


async def test_bad_ids_are_errors(ctx):
    assert (await output(ctx, "bnope")).content == "No task found with ID: bnope"
    assert (await TaskStop().run(TaskStopInput(task_id="bnope"), ctx)).content == "No task found with ID: bnope"
    missing = await TaskStop().run(TaskStopInput(), ctx)
    assert missing.is_error and "task_id" in missing.content


async def test_the_agents_end_kills_running_background_shells(ctx):
    result, shell = await start(ctx, "sleep 30")
    pgid = shell.process.pid
    await ctx.processes.kill_all(grace_s=0.2)
    assert await until(lambda: not live_members(pgid))
    assert ctx.processes.background == {} and ctx.processes.take_notices() == []


def test_killshell_is_the_old_name_of_taskstop():
    from covey.common.tool_names import canonical_tool_name

    assert canonical_tool_name("KillShell") == "TaskStop"


async def test_task_output_of_a_huge_output_file_reads_only_its_end(ctx):
    import tracemalloc

    from covey.tools.shells import MAX_OUTPUT_CHARS

    result, shell = await start(ctx, "head -c 40000000 /dev/zero | tr '\\0' 'a'; echo; echo the-end")
    assert await until(lambda: shell.process.returncode is not None, within_s=30)
    tracemalloc.start()
    try:
        text = (await output(ctx, shell.shell_id)).content
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "the-end" in text and f"[Truncated: the full output is in {shell.output_path}]" in text
    assert len(text) < MAX_OUTPUT_CHARS + 2000 and peak < 5_000_000  # not the 40 MB file
