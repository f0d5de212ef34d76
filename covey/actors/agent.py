"""``AgentRunner`` runs one agent at a time from its spec; ``AgentActor`` is its thin Ray shell.

A run is started detached (``start``); whoever cares follows its events
(``follow``: the session for the main agent, the parent for a sync child) or
awaits its final report (``wait``: the registry's watch, a sync parent).
Between runs the runner holds no state, which ``reset`` checks before the pool
hands the actor to another agent.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

import ray

from covey.actors.inbox import inbox_for
from covey.actors.team_context import team_context_for
from covey.actors.warmup import warm_up
from covey.agents.lifecycle import AgentServices, run_agent
from covey.agents.progress import Progress
from covey.agents.reports import notice_text
from covey.agents.spec import AgentSpec
from covey.agents.transcript import TranscriptWriter, transcript_path
from covey.errors import AgentUnavailable
from covey.events import Event, PermissionPrompt
from covey.hooks.callback import HookCall, HookCallbackPrompt
from covey.model.factory import make_model
from covey.model.pricing import PriceTable
from covey.registry.answers import Finished
from covey.registry.records import FinalReport, Status, notice_key
from covey.actors.travel import arrived
from covey.teams.messages import TaskNotice

_DONE = object()
FOLLOWER_GRACE_S = 30.0
"""How long a finished run waits for its follower to say it has the report. Under load
(a CPU burner, fifty children on two cores) a live follower was seen to need over 5 s."""


@dataclass
class _Run:
    spec: AgentSpec
    report: asyncio.Future
    queue: asyncio.Queue | None
    task: asyncio.Task | None = None
    cancel_status: Status = "killed"
    cancel_reason: str = ""
    answers: dict[str, asyncio.Future] = field(default_factory=dict)
    followed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once nobody follows the run's events any more: the follower said it has the
    report (``received``), left before the report, moved the run to the background, or
    there never was one. Until then the actor is neither recycled nor killed (``reset``)."""


class AgentRunner:
    def __init__(self) -> None:
        self._run: _Run | None = None
        self._cancelled_early: tuple[str, Status, str] | None = None
        """A cancel that came before its agent's run: (agent id, status, reason)."""
        self.runs_served = 0
        self._baseline_fds = _open_fds()
        self._baseline_children = _child_processes()

    # -- one run -------------------------------------------------------------

    async def start(self, spec: AgentSpec, *, follow: bool = False) -> str:
        if self._run is not None and not self._run.report.done():
            raise RuntimeError(f"agent actor busy with {self._run.spec.agent_id!r}")
        loop = asyncio.get_running_loop()
        run = _Run(spec=spec, report=loop.create_future(), queue=asyncio.Queue() if follow else None)
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

        Yielding the report is not handing it over: Ray runs this generator ahead of its
        reader, so the last items may still be on their way when it returns, and an actor
        killed then takes them with it (a sync child's finished result was reported as a
        dead actor). The reader says it has the report with ``received``.
        """
        run = self._require_run()
        if run.queue is None:
            return
        queue = run.queue
        handed = False
        try:
            while (item := await queue.get()) is not _DONE:
                handed = handed or isinstance(item, FinalReport)
                yield item
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

    async def finish(self) -> Finished:
        """The run's report and, for a run nobody follows, whether the actor reset clean
        (``reset``) right after it: the registry's watch learns both in one call.
        "unchecked": a follower may still be reading, so whoever recycles the actor asks ``reset``."""
        run = self._require_run()
        report = await asyncio.shield(run.report)
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
            run.queue.put_nowait(_DONE)
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

    # -- permission prompts ---------------------------------------------------

    async def ask(self, request: Any) -> Any:
        """Show a prompt to the person at the root of this run's event stream (bubbling)."""
        run = self._run
        if run is None or run.queue is None or run.report.done():
            return False
        request_id = uuid.uuid4().hex
        future = asyncio.get_running_loop().create_future()
        run.answers[request_id] = future
        if isinstance(request, HookCall):  # an SDK hook callback, asked the same way
            prompt: Event = HookCallbackPrompt(request_id=request_id, session_id=run.spec.session_id,
                                               agent_id=run.spec.agent_id, **request.model_dump())
        else:
            prompt = PermissionPrompt(request_id=request_id, **_prompt_fields(request, run.spec))
        await run.queue.put(prompt)
        return await future

    async def answer(self, request_id: str, answer: Any) -> bool:
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
        leftovers = [t for t in asyncio.all_tasks() if not _is_serving(t)]
        return (not leftovers and _open_fds() <= self._baseline_fds + 2
                and not _new_children(self._baseline_children))

    # -- internals -------------------------------------------------------------

    def _require_run(self) -> _Run:
        if self._run is None:
            raise RuntimeError("no agent run on this actor")
        return self._run

    async def _drive(self, run: _Run) -> None:
        spec = run.spec
        progress = Progress(spec, PriceTable.load(spec.settings.model_prices, env=spec.settings.env))
        path = transcript_path(spec.transcript_dir, spec.session_id, spec.agent_id)
        # A resumed agent or a conversation's next turn continues its transcript's chain.
        open_writer = TranscriptWriter.continuing if spec.history and path.exists() else TranscriptWriter
        writer = open_writer(path, session_id=spec.session_id, agent_id=spec.agent_id, cwd=spec.cwd,
                             sidechain=spec.depth > 0)
        services, report = None, None
        try:
            services = self._services(run, progress, writer)
            async for event in run_agent(spec, services):
                await progress.observe(event, writer)
                if run.queue is not None:
                    await run.queue.put(event)
            report = await _deliver_notice(spec, _safe_report(progress, None, "", services), writer,
                                           resumable=_resumable(spec, services))
        except asyncio.CancelledError:
            report = _safe_report(progress, run.cancel_status, run.cancel_reason or "cancelled", services)
        except Exception as exc:  # the agent failed; its owner hears about it through the report
            report = _safe_report(progress, "failed", f"{type(exc).__name__}: {exc}", services)
        finally:
            progress.close()
            writer.close()
            for future in run.answers.values():
                if not future.done():
                    future.set_result(False)
            # Whatever happened, the run ends with a report: a waiter must never hang.
            report = report or FinalReport(status="failed", text="the agent ended without a report")
            if run.queue is not None:
                run.queue.put_nowait(report)
                run.queue.put_nowait(_DONE)
            if not run.report.done():
                run.report.set_result(report)

    def _services(self, run: _Run, progress: Progress, writer: TranscriptWriter) -> AgentServices:
        spec = run.spec

        def emit(event: Event) -> None:
            if run.queue is not None:
                run.queue.put_nowait(event)

        async def record_start(messages: list[dict[str, Any]]) -> None:
            for message in messages:
                await writer.append(message["role"], message)

        team = team_context_for(spec)
        return AgentServices(
            model=_model_of(spec.model, spec.settings.env),
            asker=_asker_for(spec, self),
            hook_caller=_hook_caller_for(spec, self),
            inbox=inbox_for(spec, emit),
            cost_of=progress.prices.cost_usd,
            emit=emit,
            on_start=record_start,
            team=team,
        )


def _end_unstarted(run: _Run, status: Status, reason: str) -> None:
    """End a run that never took a step: its report still comes, like any run's."""
    report = FinalReport(status=status, text=f"The agent {status}: {reason or 'cancelled'}")
    if run.queue is not None:
        run.queue.put_nowait(report)
        run.queue.put_nowait(_DONE)
    run.report.set_result(report)


async def _deliver_notice(
    spec: AgentSpec, report: FinalReport, writer: TranscriptWriter, *, resumable: bool = False,
) -> FinalReport:
    """A background agent that ended by itself puts its notice in its owner's mailbox:
    one actor call, where the registry's delivery would take two (the report to the
    registry, the notice to the mailbox). The registry keeps the rest: a resumed agent,
    a teammate (its unfinished tasks go in the notice), a sync child moved to the
    background, an agent stopped or killed, an actor that died, and an agent that mail
    may still resume (``resumable``): the registry resumes it right after the notice,
    before its owner can conclude that nothing more is coming. The mailbox takes one
    notice per ``notice_key``, so a notice sent by both is queued once."""
    runtime = spec.runtime
    if (not spec.background or spec.team or spec.history or not spec.parent_agent_id or resumable
            or runtime is None or runtime.mailbox is None):
        return report
    text = notice_text(agent_id=spec.agent_id, description=spec.description, tool_use_id=spec.tool_use_id,
                       output_file=str(writer.path), report=report)
    notice = TaskNotice(task_id=spec.agent_id, status=report.status, text=text, key=notice_key(spec.agent_id))
    try:
        await runtime.mailbox.put(spec.parent_agent_id, notice)
    except AgentUnavailable:
        return report  # the registry tries again, and tells whoever is left
    return report.model_copy(update={"delivered_at": time.time()})


def _resumable(spec: AgentSpec, services: AgentServices) -> bool:
    """Whether mail that came during the last turn may resume this agent once it ends: in a
    session with teams (SendMessage reaches anyone), or once it launched background work
    (their notices come to it). The registry's ``_resume_if_mail_waits`` asks the same."""
    teams = spec.runtime is not None and spec.runtime.messaging
    return bool(teams or (services.inbox is not None and services.inbox.owns_background()))


def _safe_report(progress: Progress, status: Any, reason: str, services: AgentServices | None) -> FinalReport:
    worktree = services.outcome.get("worktree") if services is not None else None
    try:
        return progress.report(status=status, reason=reason, worktree=worktree)
    except Exception as exc:  # a report that cannot be built still reports
        return FinalReport(status="failed", text=f"the agent's report could not be built: {exc}")


def _asker_for(spec: AgentSpec, runner: AgentRunner) -> Any:
    """Who answers this agent's permission prompts (docs/definitions.md#permissions: agents that cannot ask deny)."""
    if not spec.settings.can_ask:
        return None
    if spec.depth == 0:
        return runner.ask
    root = spec.runtime.root if spec.runtime is not None else None
    return root.ask if root is not None else None


def _hook_caller_for(spec: AgentSpec, runner: AgentRunner) -> Any:
    """How this agent runs the SDK client's hook callbacks: it asks the session's root (the
    main agent's actor, whose events the session reads), as permission prompts bubble."""
    if spec.depth == 0:
        ask = runner.ask
    else:
        root = spec.runtime.root if spec.runtime is not None else None
        if root is None:
            return None
        ask = root.ask

    async def call(callback_id: str, payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        answer = await ask(HookCall(callback_id=callback_id, input=payload, tool_use_id=tool_use_id))
        if not isinstance(answer, dict):
            raise RuntimeError("no claude-agent-sdk client answered the hook callback")
        return answer

    return call


def _model_of(source: Any, env: dict[str, str] | None) -> Any:
    """A Model object travels as is; a spec string is built here, where the agent runs, from the run's env."""
    return source if hasattr(source, "create") else make_model(source, env=env)


def _prompt_fields(request: Any, spec: AgentSpec) -> dict[str, Any]:
    return {
        "tool_name": request.tool_name,
        "subject": request.subject,
        "input": request.input,
        "message": request.message,
        "reason": request.reason,
        "tool_use_id": getattr(request, "tool_use_id", None),
        "session_id": spec.session_id,
        "agent_id": getattr(request, "agent_id", None) or spec.agent_id,
    }


def _open_fds() -> int:
    """Open files and pipes of this process. Sockets are left out: Ray opens one per
    actor this one has called (the registry, the mailbox, a parent) and keeps them for reuse."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return 0
    count = 0
    for name in names:
        try:
            count += not os.readlink(f"/proc/self/fd/{name}").startswith("socket:")
        except OSError:  # closed while we looked (the listing's own fd, a racing close)
            pass
    return count


def _new_children(baseline: set[int]) -> set[int]:
    """Child processes beyond ``baseline``. A process with no child at all knows it from
    one syscall; listing children with psutil reads every process's stat file (py-spy:
    half of a short child's CPU went there, more with many agents on the machine)."""
    if not baseline:
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)  # WNOWAIT: reaps nothing
        except ChildProcessError:
            return set()
    return _child_processes() - baseline


def _child_processes() -> set[int]:
    try:
        import psutil

        return {child.pid for child in psutil.Process().children()}
    except Exception:
        return set()


def _is_serving(task: asyncio.Task) -> bool:
    """Tasks that are not an agent's leftovers: Ray's own, and calls being served right now."""
    if task is asyncio.current_task() or task.done():
        return True
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", "")
    code = getattr(coro, "cr_code", None) or getattr(coro, "ag_code", None)
    filename = getattr(code, "co_filename", "")
    return name.startswith("_AgentActor.") or "/ray/" in filename


class _AgentActor:
    """Ray shell: each method forwards to the runner."""

    def __init__(self, preload: tuple[str, ...] = (), peers: tuple[Any, ...] = ()) -> None:
        # A pooled actor is made ready before anyone waits on it: covey's modules and
        # tool schemas loaded, the session's actor handles (``peers``: registry,
        # mailbox) already unpickled once, so their classes are known here.
        warm_up(preload)
        self._peers = peers
        self._runtime: Any = None
        self.runner = AgentRunner()

    async def start(self, spec: AgentSpec, follow: bool = False, runtime: Any = None, runtime_key: str | None = None) -> str:
        """Start ``spec``; its session runtime comes with it, or is the one this actor
        was sent before under ``runtime_key`` (it keeps the last one)."""
        return await self.runner.start(self._arrived(spec, runtime, runtime_key), follow=follow)

    async def run_detached(self, spec: AgentSpec, runtime: Any = None, runtime_key: str | None = None,
                           ) -> Finished:
        """Start ``spec`` unfollowed and answer at its end: ``finish``'s report and reset."""
        await self.runner.start(self._arrived(spec, runtime, runtime_key))
        return await self.runner.finish()

    def _arrived(self, spec: AgentSpec, runtime: Any, runtime_key: str | None) -> AgentSpec:
        if runtime is not None:
            self._runtime = runtime
        elif runtime_key is not None:
            if self._runtime is None or self._runtime.key != runtime_key:
                raise RuntimeError(f"this agent actor does not hold session runtime {runtime_key}")
            runtime = self._runtime
        return arrived(spec, runtime)

    async def follow(self) -> AsyncIterator[Event]:
        async for event in self.runner.follow():
            yield event

    async def run(self, spec: AgentSpec) -> AsyncIterator[Event]:
        async for event in self.runner.run(spec):
            yield event

    async def wait(self) -> FinalReport:
        return await self.runner.wait()

    async def finish(self) -> Finished:
        return await self.runner.finish()

    async def detach(self) -> None:
        await self.runner.detach()

    async def received(self, agent_id: str) -> None:
        await self.runner.received(agent_id)

    async def cancel(self, status: Status = "killed", reason: str = "", agent_id: str | None = None) -> bool:
        return await self.runner.cancel(status, reason, agent_id)

    async def ask(self, request: Any) -> Any:
        return await self.runner.ask(request)

    async def answer(self, request_id: str, answer: Any) -> bool:
        return await self.runner.answer(request_id, answer)

    async def reset(self) -> bool:
        return await self.runner.reset()

    async def ping(self) -> str:
        return ray.get_runtime_context().get_node_id()

    async def pid(self) -> int:
        """This actor's process id on its node (to signal or inspect it from outside)."""
        return os.getpid()

    async def loaded_modules(self) -> list[str]:
        """The modules this process has imported (tests check a run adds none)."""
        return sorted(sys.modules)


def agent_actor_class(**options: Any):
    """The Ray actor class; agents wait on the model, so they reserve no CPU.

    Ray's task events are off for its methods, except ``start``, whose task
    name says which agent the actor serves (``AgentHandle.start``): the chatty
    calls (progress, waits, resets) cost every process and the GCS CPU that a
    fan-out of a hundred children needs (docs/benchmarks.md).
    """
    return ray.remote(num_cpus=0, max_restarts=0, max_concurrency=1000, enable_task_events=False, **options)(_AgentActor)
