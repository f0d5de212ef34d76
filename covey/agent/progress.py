"""``Progress``: what one agent run has done so far, for its transcript, registry record and report."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from covey.errors import AgentUnavailable
from covey.events import AssistantEvent, CompactBoundary, Event, ResultEvent, UserEvent
from covey.ids import next_seq
from covey.model.base import TokenUsage
from covey.model.usage import ModelUsage, add_usage
from covey.runtime.records import FinalReport, Status
from covey.runtime.spec import AgentSpec
from covey.transcripts.transcript import TranscriptWriter
from covey.transcripts.transcript_read import deferred_record

PROGRESS_INTERVAL_S = 0.5
MAX_RATE_WAITS = 50
"""At most one progress message per agent in this time, the first one this long after
the run starts; the latest state wins. The registry's uses (the stall watchdog,
``covey ps``/``tree``, the live view) need no finer grain, and at a message per event a
fan-out of short children spent its CPU on them. A run shorter than this sends none:
its report carries the figures.

Money is counted at once instead: with a session budget, every agent tells the
registry of each model turn before it takes its next step (the budget check sees
what running agents spent), and the main agent always does (its result reports
what the whole session spent, its own last turn included)."""


class Progress:
    def __init__(self, spec: AgentSpec, prices: Any) -> None:
        self.spec = spec
        self.prices = prices
        self.usage = TokenUsage()
        self.model_usage: dict[str, ModelUsage] = {}
        self.cost_usd = 0.0
        self.tool_uses = 0
        self.in_flight: list[str] = []
        self.rate_wait: dict[str, Any] | None = None
        """The model request waiting for the API's rate limit (``covey ps``), None once it went."""
        self.rate_waits: list[dict[str, Any]] = []
        """The waits that ended (the last ``MAX_RATE_WAITS``): the session's trace shows them."""
        self.turns = 0
        self.last_result: ResultEvent | None = None
        self.last_text = ""
        self.started = time.monotonic()
        self._due = self.started + _first_delay_s(spec)
        """When the next progress message may go."""
        self._later: asyncio.TimerHandle | None = None
        limits = getattr(spec.runtime, "limits", None)
        self._every_turn = spec.depth == 0 or getattr(limits, "budget_usd", None) is not None
        """Tell the registry of every model turn, and wait until it has heard (money counts)."""
        self.budget_spent: str | None = None
        """The registry's answer to the last turn told: why the session's budget is spent, or None."""
        self._blocks: list[dict[str, Any]] = []
        """The blocks of the reply being recorded, until its last."""
        self.summary: str | None = None
        """The agent's last progress summary (``covey ps``)."""
        self.on_tool_turn: Callable[[dict[str, Any]], None] | None = None
        """Sees each reply that calls tools, once counted, with its last ``tool_use`` block (``task_progress``)."""

    async def observe(self, event: Event, writer: TranscriptWriter) -> None:
        match event:
            case AssistantEvent(message=message):
                self._rate_wait_ended()  # the request went: the next figures clear the wait
                # One record per block of the reply, as Claude Code records it; the event's uuid and
                # time, so its stream-json line and its record name the same message.
                await writer.append("assistant", message, uuid=event.uuid, timestamp=event.timestamp,
                                    requestId=event.request_id)
                self._blocks += message.get("content") or []
                if not event.ends_reply:
                    return
                calls = [b for b in self._blocks if b.get("type") == "tool_use"]
                self._count({**message, "content": self._blocks})  # the whole reply, counted once
                self._blocks = []
                if calls and self.on_tool_turn is not None:
                    self.on_tool_turn(calls[-1])
                # A turn that calls tools is shown at once (the stall watchdog waits for tools in
                # flight); one that only answers usually ends the run, whose report carries its
                # figures: telling the registry first would delay that report behind the tell.
                # (An agent that then parks for its background children shows that turn when they notify.)
                if self._every_turn:
                    await self._send()
                elif self.in_flight:
                    self._report_progress()
            case UserEvent(message=message):
                self.in_flight = []
                await writer.append("user", message, uuid=event.uuid, timestamp=event.timestamp,
                                    toolUseResult=event.tool_use_result)
                self._report_progress()
            case CompactBoundary():
                self._count_summary(event)
                await writer.append_compaction(
                    trigger=event.compact_metadata.get("trigger", "auto"),
                    pre_tokens=event.compact_metadata.get("pre_tokens", 0), summary=event.summary,
                    attachments=event.attachments, context=event.context, uuid=event.uuid)
            case ResultEvent():
                self.last_result = event
                if (call := event.deferred_tool_use) is not None:  # what a resume reads: the call waits
                    await writer.append("attachment", None, attachment=deferred_record(call))

    def rate_waiting(self, info: dict[str, Any]) -> None:
        """A model request waits for the API's rate limit (a ``rate_limit_event``'s info): shown
        in ``covey ps`` and the tree, from when it first waited until its reply."""
        now = time.time()
        since = self.rate_wait["since"] if self.rate_wait else now
        self.rate_wait = {"limit": info.get("apiLimit"), "cause": info.get("cause"), "since": since,
                          "until": now + (info.get("waitMs") or 0) / 1000}
        self._report_progress()

    def summarized(self, summary: str) -> None:
        """A progress summary was shown: the registry's record (``covey ps``) has it too."""
        self.summary = summary
        self._report_progress()

    def _rate_wait_ended(self) -> None:
        if self.rate_wait is not None:
            self.rate_waits = [*self.rate_waits[-(MAX_RATE_WAITS - 1):], {**self.rate_wait, "until": time.time()}]
            self.rate_wait = None

    def _count(self, message: dict[str, Any]) -> None:
        usage = TokenUsage.model_validate(message.get("usage") or {})
        model_id = message.get("model") or self.spec.model_id
        cost_usd = self.prices.cost_usd(model_id, usage)
        self.usage += usage
        self.cost_usd += cost_usd
        self.model_usage = add_usage(self.model_usage, model_id, usage, cost_usd)
        calls = [b["name"] for b in message.get("content", []) if b.get("type") == "tool_use"]
        self.tool_uses += len(calls)
        self.in_flight = calls
        self.turns += 1
        texts = [b["text"] for b in message.get("content", []) if b.get("type") == "text"]
        if texts:
            self.last_text = "".join(texts)

    def _count_summary(self, event: CompactBoundary) -> None:
        """The summary request's tokens and cost (it is no turn and calls no tool)."""
        self.count_aside(TokenUsage.model_validate(event.usage or {}), event.model)

    def count_aside(self, usage: TokenUsage, model_id: str | None) -> None:
        """A request that is no turn of the agent (a compaction's summary; WebFetch's, WebSearch's
        prompt hooks' and agent hooks' requests): its tokens and cost are the agent's all the same."""
        model_id = model_id or self.spec.model_id
        cost_usd = self.prices.cost_usd(model_id, usage)
        self.usage += usage
        self.cost_usd += cost_usd
        self.model_usage = add_usage(self.model_usage, model_id, usage, cost_usd)


    def _report_progress(self) -> None:
        """Tell the registry now, or once the interval since the last message has passed."""
        if self.spec.runtime is None or self._later is not None:
            return
        wait_s = self._due - time.monotonic()
        if wait_s <= 0:
            self._tell()
        else:
            self._later = asyncio.get_running_loop().call_later(wait_s, self._tell)

    def close(self) -> None:
        """The run ended: its report carries the final figures, a pending message is dropped."""
        if self._later is not None:
            self._later.cancel()
            self._later = None

    def _tell(self) -> None:
        self._later, self._due = None, time.monotonic() + PROGRESS_INTERVAL_S
        self.spec.runtime.registry.tell_progress(self.spec.agent_id, **self._figures())

    async def _send(self) -> None:
        """Tell the registry now and wait for it: the agent's next step (a launch the budget
        check must refuse, the result that reports the session's cost) comes after."""
        if self.spec.runtime is None:
            return
        try:
            self.budget_spent = await self.spec.runtime.registry.progress(self.spec.agent_id, **self._figures())
        except AgentUnavailable:
            pass  # the registry is gone: nothing is launched or counted any more

    def _figures(self) -> dict[str, Any]:
        return dict(usage=self.usage, model_usage=self.model_usage, tool_uses=self.tool_uses, cost_usd=self.cost_usd,
                    tools_in_flight=self.in_flight, turns=self.turns, rate_wait=self.rate_wait,
                    rate_waits=self.rate_waits, summary=self.summary, seq=next_seq())

    def report(self, status: Status | None = None, reason: str = "", worktree: dict[str, Any] | None = None) -> FinalReport:
        """The run's end as its owner hears it: the final text, or why it ended without one."""
        result = self.last_result
        if status is None:
            status = "completed" if result is not None and not result.is_error else "failed"
        text = result.result if result is not None and status == "completed" else _ended(status, reason, result, self.last_text)
        return FinalReport(
            status=status, text=text, usage=self.usage, model_usage=self.model_usage, tool_uses=self.tool_uses,
            duration_ms=int((time.monotonic() - self.started) * 1000), cost_usd=round(self.cost_usd, 6),
            worktree=worktree, turns=self.turns, rate_waits=self.rate_waits,
        )


def _first_delay_s(spec: AgentSpec) -> float:
    """The interval, or a quarter of the stall limit if that is shorter: the watchdog
    must hear of a tool in flight well before it would call the agent stalled."""
    limits = getattr(spec.runtime, "limits", None)
    stall_s = limits.stall_ms / 1000 if limits is not None else PROGRESS_INTERVAL_S
    return min(PROGRESS_INTERVAL_S, stall_s / 4)


def _ended(status: Status, reason: str, result: ResultEvent | None, last_text: str) -> str:
    why = reason or (result.result if result is not None else "the run ended without a result")
    tail = f"\nLast output before it ended:\n{last_text}" if last_text and result is None else ""
    return f"The agent {status}: {why}{tail}"


class CountedModel:
    """The agent's model as its tools, prompt hooks and agent hooks' verifiers ask it: each reply
    counted as the agent's spending (``Progress.count_aside``), so a session's cost and budget include it."""

    def __init__(self, model: Any, progress: Progress) -> None:
        self.model, self.progress = model, progress

    async def create(self, request: Any) -> Any:
        message = await self.model.create(request)
        self.progress.count_aside(TokenUsage.of(message.usage), getattr(message, "model", None))
        return message
