"""The agent runner, without Ray: every run ends with a report, and a finished runner is reusable."""

import asyncio
import subprocess
import sys

from covey.agent.actor import AgentRunner
from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.runtime.spec import AgentSpec


def _spec(tmp_path, model) -> AgentSpec:
    return AgentSpec(session_id="s", agent_id="agent-t", definition=AgentDefinition(name="t"), prompt="hi",
                     model=model, model_id="m", cwd=str(tmp_path), tool_names=["Read"], transcript_dir=str(tmp_path))


async def test_a_run_that_cannot_even_start_still_ends_with_a_failed_report(tmp_path):
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, "scripted:/no/such/rules.yaml"))
    report = await asyncio.wait_for(runner.wait(), 10)
    assert report.status == "failed" and "rules.yaml" in report.text


async def test_a_finished_runner_resets_clean_and_serves_another_run(tmp_path):
    model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "done"}}]})
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, model))
    assert (await runner.wait()).status == "completed"
    assert await runner.reset()
    await runner.start(_spec(tmp_path, model))
    assert (await runner.wait()).text == "done"


async def test_finish_resets_a_run_nobody_follows_and_leaves_a_followed_one_to_its_reader(tmp_path):
    model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "done"}}]})
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, model))
    finished = await runner.finish()
    assert finished.report.text == "done" and finished.reset == "clean"
    await runner.start(_spec(tmp_path, model), follow=True)
    finished = await runner.finish()
    assert finished.report.text == "done" and finished.reset == "unchecked"  # its follower has not read the end yet
    assert [e async for e in runner.follow()][-1] == finished.report
    await runner.received("agent-t")  # what the follower's handle says once the report is in
    assert await runner.reset()


async def test_the_actor_waits_for_its_follower_to_have_the_report_before_it_resets(tmp_path):
    """Ray runs ``follow`` ahead of its reader: its end is not the reader's receipt."""
    model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "done"}}]})
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, model), follow=True)
    assert [e async for e in runner.follow()][-1].text == "done"  # yielded, maybe not yet delivered
    confirmed: list[str] = []

    async def follower_confirms_late() -> None:
        await runner.received("agent-other")  # another run's receipt changes nothing
        await asyncio.sleep(0.1)
        confirmed.append("agent-t")
        await runner.received("agent-t")

    asyncio.get_running_loop().create_task(follower_confirms_late())
    # (awaited in this task: the reset counts other pending tasks of the process as leftovers)
    assert await runner.reset()
    assert confirmed == ["agent-t"]  # it returned only once the follower had the report


async def test_a_follower_that_leaves_before_the_report_is_not_waited_for(tmp_path):
    model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "slow"}, "latency_s": 0.3}]})
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, model), follow=True)
    stream = runner.follow()
    await stream.__anext__()  # the first event, then the reader goes away
    await stream.aclose()
    await runner.wait()
    assert await runner.reset()


async def test_a_follower_that_never_confirms_is_given_up_on_after_the_grace(tmp_path):
    model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "done"}}]})
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, model), follow=True)
    [e async for e in runner.follow()]
    assert await runner.reset(follower_grace_s=0.05) is False  # not reusable: killed, its reader gone


async def test_cancel_ends_the_run_with_the_given_status(tmp_path):
    model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "late"}, "latency_s": 30}]})
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, model))
    await asyncio.sleep(0.1)
    assert await runner.cancel("failed", "stalled")
    report = await runner.wait()
    assert report.status == "failed" and "stalled" in report.text


async def test_a_child_process_left_behind_makes_the_reset_fail(tmp_path):
    model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "done"}}]})
    runner = AgentRunner()
    await runner.start(_spec(tmp_path, model))
    await runner.wait()
    stray = subprocess.Popen(["sleep", "30"])  # as if a tool had started it and not waited
    try:
        assert not await runner.reset()
    finally:
        stray.kill()
        stray.wait()
    assert await runner.reset()


def test_a_process_without_children_proves_it_in_one_call():
    """The fast path (no baseline children: an agent actor's process), in a fresh interpreter."""
    code = (
        "import subprocess\n"
        "from covey.agent.hygiene import new_children\n"
        "assert new_children(set()) == set()\n"
        "p = subprocess.Popen(['sleep', '30'])\n"
        "assert new_children(set()) == {p.pid}\n"
        "p.kill(); p.wait()\n"
        "assert new_children(set()) == set()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
