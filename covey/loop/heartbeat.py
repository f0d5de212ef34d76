"""A long tool call's heartbeat: while a tool that asks for one runs (the Agent tool: a sync
child can take minutes), a ``tool_progress`` event every ``heartbeat_s`` seconds says it is
still going, as Claude Code's print mode does, so a program reading the stream can tell a
working call from a hung one."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Callable, Mapping

from covey.events import ToolProgress
from covey.model.messages import ToolUseBlock


EVERY_ENV = "COVEY_TOOL_HEARTBEAT_MS"
"""The run's environment may set every heartbeat's interval in milliseconds (tests use a short one)."""


def every_s(own: float | None, env: Mapping[str, str] | None) -> float | None:
    """A tool's heartbeat interval: its own (the Agent tool's 30 s, Claude Code's), or ``COVEY_TOOL_HEARTBEAT_MS``
    of the run's environment; None for a tool that has none."""
    given = (env if env is not None else os.environ).get(EVERY_ENV, "")
    if not own:
        return None
    return max(int(given), 50) / 1000 if given.isdigit() else own


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
