"""A fake Messages API whose answers come from scripted rules: the real SDK path, end to end.

Agents in Ray actors send real HTTP requests (through ``AnthropicModel``) to a
server on 127.0.0.1 in the test process; the server records every request and
answers with the first scripted rule that matches it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from covey.gateway.anthropic import AnthropicModel
from covey.model.base import ModelRequest
from covey.model.scripted import ScriptedModel
from tests.fake_messages_api import FakeMessagesAPI


def served(*rules: dict[str, Any], usage: dict[str, int] | None = None, prompt_cache: bool = False) -> FakeMessagesAPI:
    """``usage``: what every reply reports (default: the fake API's own small figures);
    ``prompt_cache``: input token counts from the fake's prompt-cache model instead."""
    script = ScriptedModel.from_dict({"rules": list(rules)})

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        request = ModelRequest(
            model=body["model"], system=body.get("system") or [], messages=body["messages"], tools=body.get("tools") or [],
        )
        message = asyncio.run(script.create(request))
        reply = {"content": [block.to_dict() for block in message.content], "stop_reason": message.stop_reason}
        return {**reply, "usage": usage} if usage else reply

    return FakeMessagesAPI(replies=[answer], prompt_cache=prompt_cache)


def model_for(api: FakeMessagesAPI) -> AnthropicModel:
    return AnthropicModel(api_key="test-key", base_url=api.url, max_retries=1)


def text_of(body: dict[str, Any]) -> str:
    """Everything a request says: system, messages and tool names, as one string."""
    system = " ".join(b.get("text", "") for b in body.get("system") or [])
    return system + " " + str(body["messages"])


def requests_with(api: FakeMessagesAPI, marker: str) -> list[dict[str, Any]]:
    """Requests of sub-agents (not the main agent) whose conversation carries ``marker`` (their prompt)."""
    return [b for b in api.requests if "You are covey" not in _system(b) and marker in str(b["messages"])]


def _system(body: dict[str, Any]) -> str:
    return " ".join(block.get("text", "") for block in body.get("system") or [])


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in body.get("tools") or []]
