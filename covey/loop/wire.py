"""The loop's messages as the API gets them and as Claude Code prints them: cache breakpoints,
the assistant turn kept in the history, a reply on the wire."""

from __future__ import annotations

from typing import Any

from covey.model.messages import Message

CACHE = {"type": "ephemeral"}


def wire_message(message: Message) -> dict[str, Any]:
    """An assistant reply as Claude Code prints it: the API's message with its usage's token
    counts present (0 when the API left them out) and its null fields kept."""
    data = message.model_dump(mode="json", exclude_none=True)
    usage = data.get("usage", {})
    data["usage"] = {
        "input_tokens": usage.pop("input_tokens", 0),
        "cache_creation_input_tokens": usage.pop("cache_creation_input_tokens", 0),
        "cache_read_input_tokens": usage.pop("cache_read_input_tokens", 0),
        "output_tokens": usage.pop("output_tokens", 0),
        **usage,
    }
    return {**data, "stop_reason": message.stop_reason, "stop_sequence": message.stop_sequence,
            "context_management": data.get("context_management")}


def assistant_message(message: Message) -> dict[str, Any]:
    """A reply as the history keeps it: its role and content blocks."""
    return {"role": "assistant", "content": [block.to_dict() for block in message.content]}


def as_blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as a list of blocks (a string is one text block)."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def with_breakpoint(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy whose last item carries a cache breakpoint (the static prefix)."""
    if not items:
        return []
    return [*items[:-1], {**items[-1], "cache_control": CACHE}]


def with_breakpoints(messages: list[dict[str, Any]], inherited: int = 0) -> list[dict[str, Any]]:
    """A copy with a breakpoint on the conversation's tail and, for a fork, on the end of what it
    inherited (the prefix its siblings share): with system and tools, at most the API's four.
    The markers never go into the history itself."""
    marked = list(messages)
    for index in {len(marked) - 1, inherited - 1}:
        if 0 <= index < len(marked) and (blocks := as_blocks(marked[index]["content"])):
            marked[index] = {**marked[index], "content": with_breakpoint(blocks)}
    return marked
