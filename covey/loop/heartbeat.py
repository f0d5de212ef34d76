"""A long tool call's heartbeat: while a tool that asks for one runs (the Agent tool: a sync
child can take minutes), a ``tool_progress`` event every ``heartbeat_s`` seconds says it is
still going, as Claude Code's print mode does, so a program reading the stream can tell a
working call from a hung one."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from covey.events import ToolProgress
from covey.model.messages import ToolUseBlock


async def beat(emit: Callable[[Any], None], call: ToolUseBlock, tool_name: str, every_s: float,
               session_id: str = "") -> None:
    """Emit a heartbeat for ``call`` every ``every_s`` seconds until cancelled."""
    started = time.monotonic()
    fields = call.input if isinstance(call.input, dict) else {}
    while True:
        await asyncio.sleep(every_s)
        emit(ToolProgress(
            session_id=session_id, tool_use_id=call.id, tool_name=tool_name, heartbeat=True,
            elapsed_time_seconds=round(time.monotonic() - started, 1),
            description=_text(fields.get("description")), subagent_type=_text(fields.get("subagent_type")),
        ))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
