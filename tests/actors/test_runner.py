"""The agent runner, without Ray: every run ends with a report, and a finished runner is reusable."""

import asyncio
import subprocess
import sys

from covey.actors.agent import AgentRunner
from covey.agents.definition import AgentDefinition
from covey.agents.spec import AgentSpec
from covey.model.scripted import ScriptedModel


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
    report, clean = await runner.finish()
    assert report.text == "done" and clean is True
    await runner.start(_spec(tmp_path, model), follow=True)
    report, clean = await runner.finish()
    assert report.text == "done" and clean is None  # its follower has not read the end yet
    assert [e async for e in runner.follow()][-1] == report
    assert await runner.reset()


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
        "from covey.actors.agent import _new_children\n"
        "assert _new_children(set()) == set()\n"
        "p = subprocess.Popen(['sleep', '30'])\n"
        "assert _new_children(set()) == {p.pid}\n"
        "p.kill(); p.wait()\n"
        "assert _new_children(set()) == set()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
