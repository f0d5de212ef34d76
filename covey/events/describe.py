"""Human-readable one-line descriptions of events (demo, --verbose text output)."""

from __future__ import annotations

import json
from typing import Any

from covey.events import (
    AssistantEvent, CompactBoundary, Event, McpServerFailed, PermissionDenied, ResultEvent, TaskNotification, TaskProgress,
    TaskStarted, UserEvent, token_count,
)


def describe(event: Event) -> list[str]:
    who = f"[{event.agent_id[:14]}] " if event.agent_id else ""
    match event:
        case AssistantEvent(message=message):
            return [who + _assistant_block(block) for block in message["content"] if _assistant_block(block)]
        case UserEvent(message=message):
            return [who + _result_line(block) for block in message["content"] if block.get("type") == "tool_result"]
        case TaskStarted(description=description, task_id=task_id):
            return [f"{who}started {task_id}: {description}"]
        case TaskProgress(summary=str(summary)) if summary:  # a tool call's shows as the call itself
            return [f"{who}progress: {_short(summary)}"]
        case TaskNotification(status=status, summary=summary):
            return [f"{who}notification: {summary} ({status})"]
        case McpServerFailed(message=message):
            return [f"{who}{_short(message)}"]
        case PermissionDenied(tool_name=tool_name, message=message):
            return [f"{who}denied {tool_name}: {_short(message)}"]
        case CompactBoundary(compact_metadata=meta):
            return [f"{who}compacted the conversation ({meta.get('pre_tokens', 0)} tokens, {meta.get('trigger')})"]
        case ResultEvent():
            tokens = token_count(event.usage)
            return [f"{who}result ({event.subtype}, {event.num_turns} turns, {tokens} tokens, ${event.total_cost_usd:.4f})"]
    return []


def _assistant_block(block: dict[str, Any]) -> str:
    if block.get("type") == "text" and block["text"].strip():
        return "says: " + _short(block["text"])
    if block.get("type") == "tool_use":
        return f"calls {block['name']}({_short(json.dumps(block['input']), 100)})"
    return ""


def _result_line(block: dict[str, Any]) -> str:
    content = block.get("content")
    text = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content or [])
    mark = "error" if block.get("is_error") else "result"
    return f"  {mark}: {_short(text)}"


def _short(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
