"""``ProgressReports``: the ``task_progress`` events of one sub-agent, from its own process.

As Claude Code's: one after each reply of the agent that calls tools (``last_tool_name``, and
what that call is doing as ``description``: ``activity``) and, with progress summaries on (``covey.agent.progress_summary``), one
per summary (``summary``, which is also the ``description``). Their ``usage`` is the agent's
own figures (``Progress``): tokens, tool calls, time since it started. They go where the
agent's messages go (``send``): a sync child's to its parent, a background child's to the
session root; a summary request's tokens and cost count as the agent's (its model is the
counted one).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Callable

from covey.agent.progress import Progress
from covey.agent.progress_summary import (
    TIMEOUT_S, SummaryClock, summary_prompt, summary_request, summary_text,
)
from covey.definitions.tool_catalog import BUILTIN_TOOLS
from covey.events import Event, TaskProgress, TaskUsage
from covey.runtime.spec import AgentSpec


class ProgressReports:
    def __init__(self, spec: AgentSpec, progress: Progress, model: Any, send: Callable[[Event], None],
                 interval_ms: int | None, *, timeout_s: float = TIMEOUT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.spec, self.progress, self.model, self.send = spec, progress, model, send
        self.timeout_s, self.now = timeout_s, clock
        self.summaries = SummaryClock(interval_ms / 1000, started=clock()) if interval_ms else None
        self._task: asyncio.Task[None] | None = None

    def tool_turn(self, call: dict[str, Any]) -> None:
        """A reply of the agent called tools (``call``: its last ``tool_use`` block): tell the stream."""
        name, given = str(call.get("name")), call.get("input")
        doing = activity(name, given if isinstance(given, dict) else {}, self.spec.cwd)
        self.send(self._event(doing or self.spec.description, last_tool_name=name))

    def start(self, loop: Any) -> None:
        """The agent's loop is built: its summaries fork its requests from here on."""
        if self.summaries is not None and self._task is None:
            self._task = asyncio.create_task(self._summarize(loop), name=f"progress summaries {self.spec.agent_id}")

    async def stop(self) -> None:
        """The run ended: no summary is asked for or shown any more, and none is left running
        (an actor with a task left over is not reused)."""
        if self.summaries is not None:
            self.summaries.stop()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _summarize(self, loop: Any) -> None:
        clock = self.summaries
        assert clock is not None
        while clock.running:
            await asyncio.sleep(clock.wait_s(self.now()))
            if not clock.due(self.now(), len(loop.messages)):
                continue
            summary = await self._ask(loop, clock.last)
            if (shown := clock.done(self.now(), summary)) is not None:
                self.send(self._event(shown, summary=shown))
                self.progress.summarized(shown)

    async def _ask(self, loop: Any, previous: str | None) -> str | None:
        """One summary request; None if it fails (a failure of its own never stops the agent)."""
        request = summary_request(loop, summary_prompt(previous), self.spec.agent_id)
        try:
            return summary_text(await asyncio.wait_for(self.model.create(request), self.timeout_s))
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a summary is a nicety: the clock counts the failure
            return None

    def _event(self, description: str, **fields: Any) -> TaskProgress:
        progress, spec = self.progress, self.spec
        usage = TaskUsage(total_tokens=progress.usage.total, tool_uses=progress.tool_uses,
                          duration_ms=int((time.monotonic() - progress.started) * 1000))
        return TaskProgress(session_id=spec.session_id, agent_id=spec.agent_id, task_id=spec.agent_id,
                            run_id=spec.run_id, tool_use_id=spec.tool_use_id, description=description,
                            subagent_type=spec.definition.name, usage=usage, **fields)


ACTIVITIES = {tool.name: tool.activity for tool in BUILTIN_TOOLS if tool.activity is not None}
"""What a call is doing, in Claude Code's words for its tools (a ``task_progress``'s ``description``)."""
COMMAND_CHARS = 60


def activity(name: str, given: dict[str, Any], cwd: str) -> str | None:
    """``Reading src/app.py``, ``Running the tests``: what the call ``name(given)`` is doing;
    None for a tool with no such phrase (the task's description stands instead)."""
    if name == "Bash":
        command = " ".join(str(given.get("command") or "").split())
        if not command:
            return "Running command"
        shown = str(given.get("description") or "").strip() or command
        return "Running " + (shown if len(shown) <= COMMAND_CHARS else shown[:COMMAND_CHARS - 1] + "…")
    if name in ("Agent", "Task"):
        return " ".join(str(given.get("description") or "").split()) or "Running task"
    verb, field = ACTIVITIES.get(name, ("", ""))
    value = str(given.get(field) or "").strip()
    if not verb or not value:
        return None
    if field.endswith("_path") and os.path.isabs(value) and os.path.isabs(cwd) and os.path.commonpath([cwd, value]) == cwd:
        value = os.path.relpath(value, cwd)  # a file of the agent's folder, as the person sees it
    return f"{verb} {value}"


def progress_reports(spec: AgentSpec, progress: Progress, model: Any,
                     emit: Callable[[Event], None]) -> ProgressReports | None:
    """The reports of a sub-agent's run, when the session's reader reads its sub-agents' events
    (stream-json, ``--verbose``, an SDK program, a Python ``Session``): a sync child's go into its
    own stream (``emit``: its parent follows it and passes them on), a background child's to the
    session root's, where its messages go. None for the main agent, or where nobody reads them."""
    runtime = spec.runtime
    if runtime is None or spec.depth == 0 or not getattr(runtime, "child_events", True):
        return None
    root = getattr(runtime, "root", None)
    send = emit if not spec.background else root.tell_relay if root is not None else None
    return ProgressReports(spec, progress, model, send, spec.settings.progress_summary_ms) if send else None
