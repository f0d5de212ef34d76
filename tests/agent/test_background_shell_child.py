"""The issue's "done means": a background Bash started by a child is readable while it runs
(Read of its output file) and is stopped when the child ends (run_agent's cleanup, no Ray)."""

from __future__ import annotations

import json

import psutil

from covey.agent.lifecycle import AgentServices, run_agent
from covey.common.private_dirs import user_temp_dir
from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.runtime.spec import AgentSpec, RunSettings

MARKER = "sleep 31.4159"


def sleepers() -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.info["status"] != psutil.STATUS_ZOMBIE and " ".join(proc.info["cmdline"] or []) == MARKER:
            found.append(proc)
    return found


async def test_a_childs_background_shell_is_readable_while_it_runs_and_gone_when_the_child_ends(tmp_path):
    agent_id = "agent-0000bgshell0001"
    tasks = user_temp_dir() / agent_id / "tasks"
    wait_for_output = f"until grep -qs started {tasks}/*.output; do sleep 0.05; done"
    model = ScriptedModel.from_turns([
        {"tool_use": {"name": "Bash", "input": {"command": f"echo started; {MARKER}", "run_in_background": True}}},
        {"tool_use": {"name": "Bash", "input": {"command": f"timeout 20 sh -c '{wait_for_output}'"}}},
        {"tool_use": {"name": "Read", "input_from": {"file_path": r"Output is being written to: (\S+\.output)\."}}},
        {"text": "The server started."},
    ])
    spec = AgentSpec(
        session_id="s", agent_id=agent_id, definition=AgentDefinition(name="worker", description="w"), prompt="go",
        model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=["Bash", "Read"], max_turns=6, depth=1,
        transcript_dir=str(tmp_path / "t"), settings=RunSettings(),
    )
    read_while_running = None
    async for event in run_agent(spec, AgentServices(model=model)):
        text = json.dumps(getattr(event, "message", None))
        if getattr(event, "type", None) == "user" and "1\\tstarted" in text:
            read_while_running = bool(sleepers())  # the child is still running: so is its shell
    assert read_while_running is True
    assert sleepers() == []  # the child ended: its background shell was killed
