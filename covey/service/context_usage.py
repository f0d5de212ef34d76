"""The SDK's ``get_context_usage``: what the main agent's context holds, in Claude Code's shape.

Claude Code answers from its own token estimates by category (the ``/context`` command's
figures). covey estimates the system prompt and the tools' definitions at about four
characters a token (as its compaction does for what no reply has counted), and takes the
conversation's size from the main agent's last reply, whose usage the Messages API counted:
its transcript keeps it. What that reply counted beyond the prompt and the tools is Messages.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from covey.agent.catalog import tool_catalog
from covey.loop.compact import compact_limits
from covey.model.limits import LimitTable
from covey.session import Session, main_agent

TAIL_BYTES = 1024 * 1024
"""How much of the transcript's end is read for the last reply (its records are one line each)."""
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def context_usage(session: Session) -> dict[str, Any]:
    """The answer to ``get_context_usage`` (claude-agent-sdk's ``ContextUsageResponse``)."""
    table = LimitTable.load(session.settings.model_limits, env=session.env)
    model = session.model_id
    window, raw = table.window(model), table.of(model).context_window
    threshold = compact_limits(model, table, session.env,
                               enabled=session.settings.auto_compact_enabled is not False).threshold
    system, tools = _estimate(main_agent.main_prompt(session.config)), _tools_tokens(session)
    usage = last_usage(Path(session.transcript()))
    counted = sum(usage.values()) if usage else 0
    messages = max(0, counted - system - tools)
    total = system + tools + messages
    buffer = window - threshold if threshold is not None else 0
    # As Claude Code's: an empty category is left out (a program's empty system prompt has none).
    categories = [category for category in (
        _category("system_prompt", "System prompt", system, "promptBorder", "used"),
        _category("system_tools", "System tools", tools, "inactive", "used"),
        _category("messages", "Messages", messages, "purple_FOR_SUBAGENTS_ONLY", "used"),
        _category("autocompact_buffer", "Autocompact buffer", buffer, "inactive", "buffer"),
    ) if category["tokens"]]
    categories.append(_category("free_space", "Free space", max(0, window - total - buffer), "promptBorder", "free"))
    return {
        "categories": categories, "totalTokens": total, "maxTokens": window, "rawMaxTokens": raw,
        "percentage": round(100 * total / window) if window else 0, "gridRows": [], "model": model,
        "memoryFiles": [], "mcpTools": [], "agents": _agents(session),
        **({"autoCompactThreshold": threshold} if threshold is not None else {}),
        "isAutoCompactEnabled": threshold is not None, "apiUsage": usage,
    }


def last_usage(transcript: Path) -> dict[str, int] | None:
    """The usage of the last reply in a transcript (Claude Code's four counts), None before any."""
    try:
        with open(transcript, "rb") as file:
            file.seek(max(0, os.fstat(file.fileno()).st_size - TAIL_BYTES))
            lines = file.read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue  # the first line of the tail may be cut
        message = record.get("message") if isinstance(record, dict) and record.get("type") == "assistant" else None
        usage = message.get("usage") if isinstance(message, dict) else None
        if isinstance(usage, dict):
            return {key: value if isinstance(value := usage.get(key), int) else 0 for key in USAGE_KEYS}
    return None


def _tools_tokens(session: Session) -> int:
    names = set(session.tool_names())
    tools = [tool.schema() for tool in tool_catalog(main_agent.tool_options(session.config)) if tool.name in names]
    return _estimate(json.dumps(tools)) if tools else 0


def _agents(session: Session) -> list[dict[str, Any]]:
    return [{"agentType": name, "source": definition.source,
             "tokens": _estimate(f"{name}: {definition.description}")}
            for name, definition in session.definitions.items()]


def _category(id: str, name: str, tokens: int, color: str, kind: str) -> dict[str, Any]:
    return {"id": id, "name": name, "tokens": tokens, "color": color, "kind": kind}


def _estimate(text: str) -> int:
    return len(text) // 4
