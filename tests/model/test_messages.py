"""covey's own Message types: the API's JSON both ways, and no SDK import in agent actors."""

from __future__ import annotations

import subprocess
import sys

import anthropic.types

from covey.model.messages import Block, Message, TextBlock, ToolUseBlock

API_REPLY = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
    "content": [
        {"type": "thinking", "thinking": "let me see", "signature": "sig=="},
        {"type": "text", "text": "Reading.", "citations": None},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.py"}},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
    ],
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 0,
              "service_tier": "standard"},
}


def test_an_sdk_message_converts_without_losing_a_field():
    sdk = anthropic.types.Message.model_validate(API_REPLY)
    message = Message.of(sdk)
    assert [type(b) for b in message.content] == [Block, TextBlock, ToolUseBlock, Block]
    assert message.content[2].input == {"file_path": "a.py"} and message.content[2].name == "Read"
    assert message.usage.cache_creation_input_tokens == 2 and message.usage.service_tier == "standard"
    # back into the next request's history exactly as the API sent it (nulls dropped)
    history = [block.to_dict() for block in message.content]
    assert history[0] == {"type": "thinking", "thinking": "let me see", "signature": "sig=="}
    assert history[1] == {"type": "text", "text": "Reading."}
    assert history[3] == API_REPLY["content"][3]
    # and the SDK reads ours back unchanged
    assert anthropic.types.Message.model_validate(message.model_dump()).model_dump() == sdk.model_dump()


def test_dicts_and_our_own_messages_are_accepted_as_they_are():
    message = Message.of(API_REPLY)
    assert Message.of(message) is message
    assert message.stop_reason == "tool_use" and message.content[1].text == "Reading."


def test_an_agent_actor_module_loads_without_the_anthropic_sdk():
    """The SDK costs ~1.2 s and ~50 MiB per process; only AnthropicModel needs it."""
    code = (
        "import sys, covey.agent.actor, covey.model, covey.model.scripted, covey.registry.actor\n"
        "print(sorted(m for m in sys.modules if m == 'anthropic' or m.startswith('anthropic.')))\n"
        "from covey.gateway.anthropic import AnthropicModel\n"
        "print('anthropic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True"], out.stdout + out.stderr
