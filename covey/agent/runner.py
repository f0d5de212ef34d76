"""``AgentRunner`` runs one agent at a time from its spec, as plain Python; the Ray actor
(``covey.agent.actor``) is its thin shell.

A run is started detached (``start``); whoever cares follows its events
(``follow``: the session for the main agent, the parent for a sync child) or
awaits its final report (``wait``: the registry's watch, a sync parent).
Between runs the runner holds no state, which ``reset`` checks before the pool
hands the actor to another agent.
"""

from __future__ import annotations

import asyncio
import uuid
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, AsyncGenerator, AsyncIterator

from covey.agent.follow_batches import batches
from covey.agent.hygiene import Baseline
from covey.agent.lifecycle import AgentServices, run_agent
from covey.agent.notice import deliver_own_notice
from covey.agent.progress import Progress
from covey.agent.services import run_services, safe_report
from covey.errors import AgentUnavailable
from covey.events import AssistantEvent, Event, PermissionPrompt, UserEvent
from covey.mcp.relay import SDK_PROMPTS
from covey.model.pricing import PriceTable
from covey.observe.otel import AgentSpan
from covey.runtime.answers import Finished
from covey.runtime.records import FinalReport, Status
from covey.runtime.spec import AgentSpec
from covey.transcripts.transcript import open_agent_transcript

if TYPE_CHECKING:
    from covey.runtime.ports import AgentPort, Question, Reply

FOLLOWER_GRACE_S = 30.0
"""How long a finished run waits for its follower to say it has the report (under load, over 5 s was seen)."""

Followed = Event | FinalReport | None  # a follower's queue: events, then the report, then None (the end)


@dataclass
class _Run:
    spec: AgentSpec
    report: asyncio.Future[FinalReport]
    queue: asyncio.Queue[Followed] | None
    task: asyncio.Task[None] | None = None
    cancel_status: Status = "killed"
    cancel_reason: str = ""
    answers: dict[str, asyncio.Future[Reply]] = field(default_factory=dict)
    followed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once nobody follows the run's events (the follower has the report, left, moved the run
    to the background, or never was): until then the actor is not recycled or killed (``reset``)."""
    relays: bool = True  # its events go to its follower (a sub-agent's not, without ``child_events``)
    root: AgentPort | None = None  # a background child's session root: its messages go there, as Claude Code prints them

    def emit(self, event: Event) -> None:
        if self.queue is not None and self.relays:
            self.queue.put_nowait(event)
        elif self.root is not None and isinstance(event, (AssistantEvent, UserEvent)):  # labelled as a sync child's
            update = {"subagent_type": self.spec.definition.name, "task_description": self.spec.description}
            self.root.tell_relay(event.model_copy(update=update) if event.subagent_type is None else event)

    def end(self, report: FinalReport) -> None:
        """The run's last word: its report to the follower and to every waiter."""
        if self.queue is not None:
            self.queue.put_nowait(report)
            self.queue.put_nowait(None)
        if not self.report.done():
            self.report.set_result(report)


class AgentRunner:
    def __init__(self) -> None:
        self._run: _Run | None = None
        self._last: tuple[str, FinalReport] | None = None
        """The last finished run's agent id and report (``report_for``)."""
        self._cancelled_early: tuple[str, Status, str] | None = None
        """A cancel that came before its agent's run: (agent id, status, reason)."""
        self.runs_served = 0
        self._baseline = Baseline()

    # -- one run -------------------------------------------------------------

    async def start(self, spec: AgentSpec, *, follow: bool = False) -> str:
        if self._run is not None and not self._run.report.done():
            raise RuntimeError(f"agent actor busy with {self._run.spec.agent_id!r}")
        loop = asyncio.get_running_loop()
        relays = spec.depth == 0 or getattr(spec.runtime, "child_events", True)
        run = _Run(spec=spec, report=loop.create_future(), queue=asyncio.Queue() if follow else None, relays=relays,
                   root=getattr(spec.runtime, "root", None) if relays and spec.depth > 0 and spec.background and not follow else None)
        if not follow:
            run.followed.set()
        self._run = run
        self.runs_served += 1
        early, self._cancelled_early = self._cancelled_early, None
        if early is not None and early[0] == spec.agent_id:  # its cancel overtook it
            _end_unstarted(run, early[1], early[2])
            return spec.agent_id
        run.task = asyncio.create_task(self._drive(run), name=f"agent {spec.agent_id}")
        return spec.agent_id

    async def follow(self) -> AsyncIterator[Event | FinalReport]:
        """The current run's events, then its ``FinalReport`` (only if started with ``follow=True``).
        Yielding the report is not handing it over (Ray runs this generator ahead of its reader,
        and a killed actor takes what is on its way with it): the reader says so with ``received``."""
        async with aclosing(self.follow_batches()) as batches:
            async for batch in batches:
                for item in batch:
                    yield item

    async def follow_batches(self) -> AsyncGenerator[list[Event | FinalReport], None]:
        """``follow``'s items in lists of what was ready together (``follow_batches.batches``:
        the report alone and last), for a reader in another process."""
        run = self._require_run()
        if run.queue is None:
            return
        handed = False
        try:
            async for batch in batches(run.queue):
                handed = handed or isinstance(batch[-1], FinalReport)
                yield batch
        finally:
            if not handed:  # the reader left before the report: nobody to wait for
                run.followed.set()

    async def received(self, agent_id: str) -> None:
        """The follower of ``agent_id``'s run has its report: the actor may be recycled."""
        run = self._run
        if run is not None and run.spec.agent_id == agent_id:
            run.followed.set()

    async def wait(self) -> FinalReport:
        return await asyncio.shield(self._require_run().report)

    async def report_for(self, agent_id: str) -> Finished:
        """``agent_id``'s report for a registry that restarted while it ran (no reset here)."""
        if (run := self._run) is not None and run.spec.agent_id == agent_id:
            return Finished(report=await asyncio.shield(run.report))
        if self._last is not None and self._last[0] == agent_id:
            return Finished(report=self._last[1])
        raise AgentUnavailable(f"this agent actor no longer holds the run of {agent_id}")

    async def finish(self) -> Finished:
        """The run's report and, for a run nobody follows, whether the actor reset clean
        (``reset``) right after it: the registry's watch learns both in one call.
        "unchecked": a follower may still be reading, so whoever recycles the actor asks ``reset``."""
        run = self._require_run()
        report = await asyncio.shield(run.report)
        self._last = (run.spec.agent_id, report)
        if run.queue is not None or not run.followed.is_set():
            return Finished(report=report)
        return Finished.after(report, await self.reset())

    async def cancel(self, status: Status = "killed", reason: str = "", agent_id: str | None = None) -> bool:
        """Stop the current run (``agent_id``'s, if given); its cleanup runs, then ``wait``
        returns a report with ``status``.

        An async Ray actor need not start one caller's calls in the order sent, so the
        registry's kill may overtake the ``run_detached`` it sent just before: a cancel
        for an agent whose run has not arrived is kept, and that run ends as it starts.
        """
        run = self._run
        if agent_id is not None and (run is None or run.spec.agent_id != agent_id):
            self._cancelled_early = (agent_id, status, reason)
            return True
        if run is None or run.task is None or run.task.done():
            return False
        run.cancel_status, run.cancel_reason = status, reason
        run.task.cancel()
        await asyncio.gather(run.task, return_exceptions=True)
        if not run.report.done():  # cancelled before its first step: ``_drive`` never ran
            _end_unstarted(run, status, reason)
        return True

    async def detach(self) -> None:
        """The follower leaves (a sync child moved to the background): stop buffering events."""
        run = self._run
        if run is not None and run.queue is not None:
            run.queue.put_nowait(None)
            run.queue = None
            run.followed.set()

    async def run(self, spec: AgentSpec) -> AsyncIterator[Event]:
        """Start and follow in one call; stopping the iteration cancels the run."""
        await self.start(spec, follow=True)
        try:
            async for event in self.follow():
                if isinstance(event, FinalReport):
                    await self.received(spec.agent_id)
                else:
                    yield event
        finally:
            await self.cancel(reason="the caller stopped following")

    # -- permission prompts, and what a background child shows the person ----

    async def relay(self, event: Event) -> bool:
        """Put a background child's event (a rate-limit wait) into this run's stream, if someone
        follows it; False if nobody does (the turn ended): the event is not kept for later."""
        run = self._run
        if run is None or run.queue is None or run.report.done():
            return False
        run.queue.put_nowait(event)
        return True

    async def ask(self, request: Question) -> Reply:
        """Put ``request`` to whoever reads this run's events (the session, bubbling up): its answer."""
        run = self._run
        if run is None or run.queue is None or run.report.done():
            return False
        request_id = uuid.uuid4().hex
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        run.answers[request_id] = future
        if (kind := SDK_PROMPTS.get(type(request))) is not None:  # an SDK hook callback or MCP message
            prompt: Event = kind(request_id=request_id, session_id=run.spec.session_id, agent_id=run.spec.agent_id,
                                 **request.model_dump())
        else:
            prompt = PermissionPrompt(request_id=request_id, **_prompt_fields(request, run.spec))
        await run.queue.put(prompt)
        return await future

    async def answer(self, request_id: str, answer: Reply) -> bool:
        run = self._run
        future = run.answers.pop(request_id, None) if run else None
        if future is None or future.done():
            return False
        future.set_result(answer)
        return True

    # -- reuse ---------------------------------------------------------------

    async def reset(self, follower_grace_s: float = FOLLOWER_GRACE_S) -> bool:
        """Forget the finished run; True only if nothing of it is left (the actor may serve again).

        A follower still reading the run's last events is let finish first: whoever
        recycles or kills the actor asks this before either. A follower that never says
        it has the report (its process died) is given up on after ``follower_grace_s``.
        """
        run = self._run
        if run is not None and not run.report.done():
            return False
        if run is not None:
            try:
                await asyncio.wait_for(run.followed.wait(), follower_grace_s)
            except asyncio.TimeoutError:
                return False
        self._run = None
        return self._baseline.clean()

    # -- internals -------------------------------------------------------------

    def _require_run(self) -> _Run:
        if self._run is None:
            raise RuntimeError("no agent run on this actor")
        return self._run

    async def _drive(self, run: _Run) -> None:
        spec = run.spec
        progress = Progress(spec, PriceTable.load(spec.settings.model_prices, env=spec.settings.env))
        writer = open_agent_transcript(spec)
        services: AgentServices | None = None
        report: FinalReport | None = None
        span = AgentSpan(spec)  # its requests and tool calls, in this task, are its spans' children
        try:
            services = run_services(spec, ask=self.ask, emit=run.emit, progress=progress, writer=writer)
            async for event in run_agent(spec, services):
                await progress.observe(event, writer)
                run.emit(event)
            inbox = services.inbox
            report = await deliver_own_notice(spec, safe_report(progress, None, "", services), str(writer.path),
                                              launched_background=inbox is not None and inbox.owns_background())
        except asyncio.CancelledError:
            report = safe_report(progress, run.cancel_status, run.cancel_reason or "cancelled", services)
        except Exception as exc:  # the agent failed; its owner hears about it through the report
            report = safe_report(progress, "failed", f"{type(exc).__name__}: {exc}", services)
        finally:
            progress.close()
            writer.close()
            for future in run.answers.values():
                if not future.done():
                    future.set_result(False)
            # Whatever happened, the run ends with a report: a waiter must never hang.
            if report is None:
                report = FinalReport(status="failed", text="the agent ended without a report")
            await span.end(report)  # exported before the report goes out: its session may stop this actor next
            run.end(report)


def _end_unstarted(run: _Run, status: Status, reason: str) -> None:
    """End a run that never took a step: its report still comes, like any run's."""
    run.end(FinalReport(status=status, text=f"The agent {status}: {reason or 'cancelled'}"))


def _prompt_fields(request: Question, spec: AgentSpec) -> dict[str, Any]:
    """A permission request as its ``PermissionPrompt`` shows it, with the run's ids."""
    fields = request.model_dump(include={"tool_name", "subject", "input", "message", "reason", "tool_use_id"})
    return {**fields, "session_id": spec.session_id, "agent_id": getattr(request, "agent_id", None) or spec.agent_id}
