"""A background agent's actor puts its own notice in its owner's mailbox, when the
rules say it is the one to (``covey.teams.delivery.agent_delivers``).

One actor call, where the registry's delivery would take two (the report to the
registry, the notice to the mailbox). The registry keeps every other notice, and
the mailbox takes one per key, so a notice sent by both is queued once.
"""

from __future__ import annotations

import time

from covey.errors import AgentUnavailable
from covey.runtime.records import FinalReport, notice_key
from covey.runtime.spec import AgentSpec
from covey.subagents.reports import agent_notice
from covey.teams.delivery import EndedRun, agent_delivers


def ending_of(spec: AgentSpec, report: FinalReport, *, launched_background: bool, stopped: bool = False) -> EndedRun:
    """What the delivery rules read about ``spec``'s run, which ended with ``report``."""
    runtime = spec.runtime
    return EndedRun(
        status=report.status, background=spec.background, has_owner=bool(spec.parent_agent_id),
        teammate=spec.team is not None, resumed=bool(spec.history), stopped=stopped,
        messaging=bool(runtime is not None and runtime.messaging), launched_background=launched_background,
    )


async def deliver_own_notice(spec: AgentSpec, report: FinalReport, output_file: str, *,
                             launched_background: bool = False) -> FinalReport:
    """Put the run's notice for its owner if this actor is the one to; the report, with
    ``delivered_at`` set if it did (the registry then records it instead of sending)."""
    runtime = spec.runtime
    mailbox = runtime.mailbox if runtime is not None else None
    owner = spec.parent_agent_id
    if mailbox is None or owner is None:
        return report
    if not agent_delivers(ending_of(spec, report, launched_background=launched_background)):
        return report
    notice = agent_notice(agent_id=spec.agent_id, description=spec.description, tool_use_id=spec.tool_use_id,
                          output_file=output_file, report=report, key=notice_key(spec.agent_id))
    try:
        await mailbox.put(owner, notice)
    except AgentUnavailable:
        return report  # the registry tries again, and tells whoever is left
    return report.model_copy(update={"delivered_at": time.time()})
