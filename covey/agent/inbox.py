"""``RuntimeInbox``: an agent's inbox, backed by the session's mailbox and registry actors.

The loop drains it between turns; after a final answer it waits here while
the agent still owns running background children (docs/subagents.md#faults), parked in the
registry so the stall watchdog leaves it alone (docs/subagents.md#what-the-parent-gets-back, keepalive).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from covey.events import BackgroundTask, BackgroundTasksChanged, TaskNotification, TaskUpdated, TaskUsage, new_uuid
from covey.ids import next_seq
from covey.teams.delivery import mail_may_come
from covey.teams.messages import Mail, ShutdownRequest, TaskNotice
from covey.teams.render import render_mail
from covey.teams.tasks import Claimed

if TYPE_CHECKING:
    from covey.runtime.spec import AgentSpec

WAIT_SLICE_S = 1.0
"""How long one mailbox wait lasts before re-checking that someone may still notify."""


class RuntimeInbox:
    def __init__(
        self, runtime: Any, agent_id: str, emit: Callable[[Any], None] | None = None, *, addressed: bool = True,
    ) -> None:
        self.runtime = runtime
        self.agent_id = agent_id
        self.emit = emit
        self.launched = 0
        """Background children and teammates this agent started (the Agent tool counts them)."""
        self.addressed = addressed
        """Whether mail may come without this agent launching anything (see ``inbox_for``)."""
        self.heard: set[str] = set()
        """Keys of the task notices read: a child that put its own notice may still be
        running in the registry's eyes for a few milliseconds."""
        self.running: dict[str, BackgroundTask] = {}
        """This agent's background tasks not yet notified, for Claude Code's task events."""

    def note_launch(self, task: BackgroundTask | None = None, *, tool_use_id: str | None = None) -> None:
        self.launched += 1
        if task is not None:
            self.running[task.task_id] = task
            self._emit_tasks()

    def _emit_tasks(self) -> None:
        if self.emit is not None:
            self.emit(BackgroundTasksChanged(session_id=self.runtime.session_id, tasks=list(self.running.values())))

    def owns_background(self) -> bool:
        return self.launched > 0

    async def drain(self) -> list[str]:
        if not (self.addressed or self.launched):
            return []  # nobody can have written: spare the mailbox round trip
        return self._texts(await self.runtime.mailbox.drain(self.agent_id))

    async def outstanding(self) -> bool:
        if set(await self.runtime.registry.outstanding(self.agent_id)) - self.heard:
            return True
        pending: int = await self.runtime.mailbox.pending(self.agent_id)
        return pending > 0

    async def wait(self) -> list[str]:
        self.runtime.registry.tell_parked(self.agent_id, True, next_seq())
        try:
            while True:
                mail = await self.runtime.mailbox.wait(self.agent_id, WAIT_SLICE_S)
                if mail:
                    return self._texts(mail)
                if not await self.outstanding():
                    return []
        finally:
            self.runtime.registry.tell_parked(self.agent_id, False, next_seq())

    def _texts(self, mail: list[Mail]) -> list[str]:
        for item in mail:
            if isinstance(item, TaskNotice) and item.key:
                self.heard.add(item.key)
            if isinstance(item, TaskNotice) and self.emit is not None:
                self._emit_notice(self.emit, item)
        return [render_mail(item) for item in mail]

    def _emit_notice(self, emit: Callable[[Any], None], notice: TaskNotice) -> None:
        """A background task's end, as Claude Code reports it: ``task_updated``, ``task_notification``
        (a completed task's report as its summary), then the running tasks without it."""
        task = self.running.pop(notice.task_id, None)
        common: dict[str, Any] = dict(session_id=self.runtime.session_id, agent_id=self.agent_id, task_id=notice.task_id,
                                      run_id=task.run_id if task is not None else f"run-{new_uuid()[:13]}")
        emit(TaskUpdated(**common, patch={"status": notice.status, "end_time": int(time.time() * 1000)}))
        report = notice.status == "completed" and notice.result is not None
        emit(TaskNotification(
            **common, tool_use_id=notice.tool_use_id or None, status=notice.status,
            output_file=notice.output_file or None,
            summary=(notice.result or "").strip() if report else notice.summary,
            summary_is_report=True if report else None,
            usage=TaskUsage(**notice.usage.model_dump()) if notice.usage is not None else TaskUsage(),
        ))
        if task is not None:
            self._emit_tasks()


class TeammateInbox(RuntimeInbox):
    """A teammate's inbox: between turns it also claims work from its team's board (docs/teams.md).

    An idle teammate takes the first pending, unowned, unblocked task; it stays
    while unfinished tasks remain (others' work may unblock more), and ends when
    the board has nothing left for it or a shutdown request arrives.
    """

    def __init__(self, runtime: Any, agent_id: str, emit: Callable[[Any], None] | None, team: Any) -> None:
        super().__init__(runtime, agent_id, emit)
        self.board = team.board  # a ``TeamSeat``
        self.member = team.member
        self.stopping = False

    def owns_background(self) -> bool:
        return True  # an idle teammate waits for tasks and messages, not only for children

    async def outstanding(self) -> bool:
        if self.stopping:
            return False
        return await super().outstanding() or await self._work_left()

    async def wait(self) -> list[str]:
        self.runtime.registry.tell_parked(self.agent_id, True, next_seq())
        try:
            while not self.stopping:
                claim = await self.board.claim_next(self.member)
                if isinstance(claim, Claimed):
                    return [assignment_text(claim.task)]
                mail = await self.runtime.mailbox.wait(self.agent_id, WAIT_SLICE_S / 2)
                if mail:
                    return self._texts(mail)
                if not await self.outstanding():
                    return []
            return []
        finally:
            self.runtime.registry.tell_parked(self.agent_id, False, next_seq())

    def _texts(self, mail: list[Mail]) -> list[str]:
        if any(isinstance(item, ShutdownRequest) for item in mail):
            self.stopping = True
        return super()._texts(mail)

    async def _work_left(self) -> bool:
        """Pending tasks, or tasks others are still working on (they may unblock more).

        Its own unfinished task does not keep a teammate waiting: when it ends, the
        registry hands that task back to the lead.
        """
        return any(
            task.status == "pending" or (task.status == "in_progress" and task.owner != self.member)
            for task in await self.board.list()
        )


def assignment_text(task: Any) -> str:
    return (
        "<system-reminder>\n"
        f"You claimed task #{task.id}: {task.subject} (from your team's task board)\n{task.description}\n"
        f'When it is done, mark it with TaskUpdate (taskId: "{task.id}", status: "completed").\n'
        "</system-reminder>"
    )


def inbox_for(spec: AgentSpec, emit: Callable[[Any], None] | None) -> RuntimeInbox | None:
    if spec.runtime is None:
        return None
    if spec.team:
        return TeammateInbox(spec.runtime, spec.agent_id, emit, spec.team)
    addressed = mail_may_come(main=spec.depth == 0, resumed=bool(spec.history), messaging=bool(spec.runtime.messaging))
    return RuntimeInbox(spec.runtime, spec.agent_id, emit, addressed=addressed)
