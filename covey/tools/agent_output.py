"""TaskOutput on a background agent's id (``agent-...``, or as its Agent call's result shows it,
without ``agent-``): its status, and its report once it ended.

Claude Code's TaskOutput answers for its local agents as for its shells (``task_type`` ``local_agent``);
covey asks the session's registry, which holds every run's record and report. The agent's
``<task-notification>`` still comes: reading the output does not take the notice away.
"""

from __future__ import annotations

import asyncio
import re
import time

from covey.common.frames import quoted_lines
from covey.tools.base import ToolContext, ToolResult
from covey.tools.services import AgentStops, TaskRecord

POLL_S = 0.1
"""How often a blocking call asks the registry again (Claude Code polls its task state as often)."""
MAX_AGENT_OUTPUT_CHARS = 30_000
_OWN_TAG = re.compile(r"<(\s*/?\s*)(output|status|task_id|task_type|retrieval_status|description)\b", re.IGNORECASE)


async def agent_output(task_id: str, ctx: ToolContext, *, block: bool, timeout_s: float) -> ToolResult | None:
    """The answer for a background agent's id; None when the session knows no such agent."""
    runtime = ctx.services.runtime
    if runtime is None:
        return None
    record = await runtime.registry.record(task_id)
    if record is None:
        return None
    if _live(record) and block:
        record = await _ended_within(runtime.registry, record, timeout_s, ctx)
    retrieval = "success" if not _live(record) else ("timeout" if block else "not_ready")
    return ToolResult(content=render_agent(record, retrieval),
                      data={"retrieval_status": retrieval, "status": record.status, "task_type": "local_agent"})


def _live(record: TaskRecord) -> bool:
    return record.status in ("running", "queued")


async def _ended_within(registry: AgentStops, record: TaskRecord, timeout_s: float, ctx: ToolContext) -> TaskRecord:
    deadline = time.monotonic() + timeout_s
    while _live(record) and not ctx.abort.is_set() and (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(min(POLL_S, left))
        record = await registry.record(record.agent_id) or record
    return record


def render_agent(record: TaskRecord, retrieval: str) -> str:
    """Claude Code's TaskOutput text for an agent: the tags a shell's has, the report as its output."""
    parts = [f"<retrieval_status>{retrieval}</retrieval_status>", f"<task_id>{record.agent_id}</task_id>",
             "<task_type>local_agent</task_type>", f"<status>{record.status}</status>"]
    if record.description:
        parts.append(f"<description>{_quoted(record.description).strip()}</description>")
    text = record.report.text if record.report is not None else ""
    if len(text) > MAX_AGENT_OUTPUT_CHARS:
        text = f"[Truncated: the full transcript is in {record.output_file}]\n" + text[-MAX_AGENT_OUTPUT_CHARS:]
    if text.strip():
        parts.append(f"<output>\n{_quoted(text.strip())}\n</output>")
    return "\n\n".join(parts)


def _quoted(text: str) -> str:
    """The agent's words are model output: indented, and this answer's tags in them escaped
    (as a report's frame tags are, covey/common/frames.py), so a line of them cannot close or forge one."""
    return "\n".join(quoted_lines(_OWN_TAG.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)))
