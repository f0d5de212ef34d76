"""An ended background agent's one notification, delivered to its owner's mailbox."""

from __future__ import annotations

import time
from typing import Protocol

from covey.registry.core import Registry
from covey.runtime.records import FinalReport
from covey.subagents.reports import record_notice
from covey.teams.delivery import registry_delivers
from covey.teams.messages import Mail
from covey.teams.tasks import Task


class Notices(Protocol):
    """The mailbox, as the supervisor uses it (``Mailbox``, or the mailbox actor's handle)."""

    async def put(self, recipient: str, mail: Mail) -> str: ...
    async def pending(self, recipient: str) -> int: ...
    async def close(self, recipient: str, forward_to: str) -> None: ...
    async def reopen(self, recipient: str) -> None: ...


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
        if not registry_delivers(report.delivered_at):  # its actor put it (``covey.teams.delivery``)
            record.notified_at = report.delivered_at
            return
        target = core.notify_target(record)
        if target is None:
            return
        await mailbox.put(target, record_notice(record, released))
        record.notified_at = time.time()
    finally:
        core.delivered(agent_id)
