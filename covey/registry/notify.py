"""An ended background agent's one notification, delivered to its owner's mailbox."""

from __future__ import annotations

import time

from covey.agents.reports import notification_text, released_text
from covey.registry.core import Registry
from covey.registry.records import FinalReport
from covey.registry.state import Notices
from covey.teams.messages import TaskNotice
from covey.teams.tasks import Task


async def notify(core: Registry, mailbox: Notices, agent_id: str, released: list[Task], report: FinalReport) -> None:
    """Deliver the ended agent's one notification (a sync child's report went to its caller).

    A background agent usually put its own already (``report.delivered_at``). If
    it did and its actor died before saying so, the mailbox drops this second
    notice: both carry the run's ``notice_key``.
    """
    record = core.claim_notification(agent_id)
    if record is None:
        return
    try:
        if report.delivered_at is not None:
            record.notified_at = report.delivered_at
            return
        target = core.notify_target(record)
        if target is None:
            return
        text = notification_text(record) + released_text(released)
        notice = TaskNotice(task_id=agent_id, status=record.status, text=text, key=record.notice_key)
        await mailbox.put(target, notice)
        record.notified_at = time.time()
    finally:
        core.delivered(agent_id)
