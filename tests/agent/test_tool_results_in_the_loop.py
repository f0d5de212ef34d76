"""What the everyday tools put in the conversation, through run_agent (no Ray): an image read
goes to the next Messages request as an image block; a background shell that ended on its own
reaches the agent as a <task-notification> before its next request."""

from __future__ import annotations

import base64

from covey.agent.lifecycle import AgentServices, run_agent
from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.runtime.spec import AgentSpec, RunSettings

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def spec(tmp_path, tools):
    return AgentSpec(
        session_id="s", agent_id="agent-0000loopblocks01", definition=AgentDefinition(name="main", description="m"),
        prompt="go", model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=tools, max_turns=5,
        transcript_dir=str(tmp_path / "t"), settings=RunSettings(),
    )


async def test_an_image_read_reaches_the_next_request_as_an_image_block(tmp_path):
    (tmp_path / "shot.png").write_bytes(PNG)
    model = ScriptedModel.from_turns([{"tool_use": {"name": "Read", "input": {"file_path": "shot.png"}}},
                                      {"text": "A single pixel."}])
    [event async for event in run_agent(spec(tmp_path, ["Read"]), AgentServices(model=model))]
    (result,) = model.requests[1].messages[-1]["content"]
    assert result["type"] == "tool_result" and not result.get("is_error")
    assert result["content"] == [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                              "data": base64.b64encode(PNG).decode()}}]


async def test_a_finished_background_shell_notifies_the_agent_before_its_next_request(tmp_path):
    model = ScriptedModel.from_turns([
        {"tool_use": {"name": "Bash", "input": {"command": "echo done", "run_in_background": True,
                                                "description": "Say done"}}},
        {"tool_use": {"name": "Bash", "input": {"command": "sleep 1"}}},
        {"text": "It finished."},
    ])
    [event async for event in run_agent(spec(tmp_path, ["Bash"]), AgentServices(model=model))]
    last = model.requests[2].messages[-1]["content"]
    notices = [block["text"] for block in last if block.get("type") == "text"]
    assert len(notices) == 1 and "<task-notification>" in notices[0]
    assert '<summary>Background command "Say done" completed (exit code 0)</summary>' in notices[0]
