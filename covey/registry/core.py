"""The running-task registry as plain Python: launch checks, records, claims, watchdog.

``Supervisor`` keeps its books with it; every rule here is tested without Ray.
All methods are synchronous, so in an asyncio actor each one is atomic: no
other call interleaves with a check-then-write.
"""

from __future__ import annotations

import os
import time
from typing import Callable, Unpack

from covey.model.usage import ModelUsage, merge_usage
from covey.registry.queue import SpawnQueue
from covey.registry.spend import count_spend
from covey.registry.tree import UsageTree, agent_tree
from covey.runtime.answers import Refused
from covey.runtime.limits import Limits
from covey.runtime.payloads import ProgressFields, SessionUsage
from covey.runtime.records import FinalReport, LaunchRequest, RunRecord


class Registry:
    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits or Limits()
        self.clock = clock
        """Monotonic seconds: what the stall watchdog measures silence with (tests pass their own)."""
        self.records: dict[str, RunRecord] = {}
        self.main_agent_id: str | None = None
        self.open: dict[str, RunRecord] = {}
        """Records running, queued or owing a notice: what the per-launch and per-tick
        questions look at, so their cost does not grow with the session's history."""
        self._running: dict[str, RunRecord] = {}
        """The live sub-agents (the concurrency limit counts them, once per launch and per dequeue)."""
        self._ended_cost_usd = 0.0
        self._earlier_turns: list[dict[str, ModelUsage]] = []
        """What the main agent's earlier turns spent per model (each turn has a record of its own)."""
        self.queue = SpawnQueue()
        self.cpus = os.cpu_count() or 1
        """The cluster's CPUs (``Limits.active_limit``): this machine's, or what the actor reads of Ray."""
        self.on_dequeue: Callable[[RunRecord], None] | None = None
        """Told of each queued record whose turn came, the moment a slot frees (``Launcher._dequeued``)."""

    def register_main(self, agent_id: str, *, model: str, cwd: str, prompt: str = "") -> RunRecord:
        """The main agent's record for its run: its first turn, or the next turn of a conversation
        (what the earlier turn spent stays in the session's figures)."""
        earlier = self.records.get(agent_id)
        if earlier is not None and not earlier.live:
            self._earlier_turns.append(earlier.model_usage)
        record = RunRecord(
            agent_id=agent_id, owner_agent_id=None, parent_agent_id=None, depth=0, description="main agent",
            prompt=prompt, model=model, agent_type="main", cwd=cwd, role="main", notified=True,
        )
        self.records[agent_id] = record
        self.main_agent_id = agent_id
        self.settle(record)
        return record

    def reserve(self, request: LaunchRequest) -> RunRecord:
        """``admit``, raising a refusal as its error (``Refused.error``)."""
        answer = self.admit(request)
        if isinstance(answer, Refused):
            raise answer.error()
        return answer

    def admit(self, request: LaunchRequest) -> RunRecord | Refused:
        """Run the launch checks in order (docs/subagents.md#limits-the-registry-actor); on success the child
        is recorded as running, or as queued (``SpawnQueue.why_waits``)."""
        queued_for = self.queue.why_waits(self, request)
        if isinstance(queued_for, Refused):
            return queued_for
        record = RunRecord(
            status="queued" if queued_for else "running",
            queued_for=queued_for,
            agent_id=request.agent_id,
            owner_agent_id=request.owner_agent_id or request.parent_agent_id,
            parent_agent_id=request.parent_agent_id,
            depth=request.depth,
            description=request.description,
            prompt=request.prompt,
            model=request.model,
            agent_type=request.agent_type,
            tool_use_id=request.tool_use_id,
            cwd=request.cwd,
            background=request.background,
            role="teammate" if request.spawns_teammate else "subagent",
            team_name=request.team_name,
            member_name=request.member_name,
            # A sync child's result goes back in its tool_result: nothing to notify.
            notified=not request.background,
            models_used=[request.model],
        )
        self.records[record.agent_id] = record
        if record.queued:
            self.queue.add(record)
        self.settle(record)
        return record

    def abandon(self, agent_id: str) -> None:
        """Undo a reservation whose start failed: nothing half-started remains."""
        for held in (self.records, self.open, self._running):
            held.pop(agent_id, None)
        self.queue.discard(agent_id)
        self._freed()

    def progress(self, agent_id: str, **fields: Unpack[ProgressFields]) -> None:
        """A running agent's latest figures (each one given replaces the last)."""
        record = self.records.get(agent_id)
        if record is None or not record.live:
            return
        record.last_activity = self.clock()
        if not record.newer("progress", fields.get("seq")):
            return
        for name in ("usage", "model_usage", "tool_uses", "cost_usd", "turns", "summary"):  # each given replaces the last
            if (value := fields.get(name)) is not None:
                setattr(record, name, value)
        if (tools_in_flight := fields.get("tools_in_flight")) is not None:
            record.tools_in_flight = list(tools_in_flight)
        if "rate_wait" in fields:  # None clears it: the request went
            record.rate_wait = dict(wait) if (wait := fields["rate_wait"]) is not None else None
        if (waits := fields.get("rate_waits")) is not None:
            record.rate_waits = [dict(wait) for wait in waits]
        if (model := fields.get("model")) and model not in record.models_used:
            record.models_used.append(model)

    def set_parked(self, agent_id: str, parked: bool, seq: int | None = None) -> None:
        """A parked agent is not at work: a queued background launch may take its place."""
        if (record := self.records.get(agent_id)) is not None and record.newer("parked", seq):
            record.parked = parked
            if parked:
                self._freed()

    def finish(self, agent_id: str, report: FinalReport) -> RunRecord | None:
        """Mark a live record ended; the first report wins, later ones return None.

        The first report decides how the run ended (status, text); what it spent is the
        most any report or progress update of the run said, and what it left (a kept
        worktree) is what the report that knows it says. A kill is recorded before the
        agent's own report, which alone knows the tokens of its last turns and what its
        cleanup did with its worktree.
        """
        record = self.records.get(agent_id)
        if record is None:
            return None
        if not record.live:
            if record.report is not None:
                self._ended_cost_usd += count_spend(record, report)
                if record.worktree is None and report.worktree is not None:
                    record.worktree = report.worktree
                    record.report = record.report.model_copy(update={"worktree": report.worktree})
            return None
        record.status = report.status
        record.report = report
        record.ended_at = time.time()
        count_spend(record, report)
        record.worktree = report.worktree
        record.tools_in_flight = []
        record.parked = False
        self._ended_cost_usd += record.cost_usd
        self.settle(record)
        self._freed()
        return record

    def _freed(self) -> None:
        """A slot may have freed: the queue's next launches take it at once (``SpawnQueue.promote``)."""
        for record in self.queue.promote(self):
            if self.on_dequeue is not None:
                self.on_dequeue(record)

    def claim_notification(self, agent_id: str) -> RunRecord | None:
        """Claim the one notification of an ended record; None if already claimed or gone."""
        record = self.records.get(agent_id)
        if record is None or record.live or record.queued or record.notified:
            return None
        record.notified, record.delivering = True, True
        record.notifications += 1
        self.settle(record)
        return record

    def delivered(self, agent_id: str) -> None:
        """The claimed notice is in the owner's mailbox, or will never be (no owner)."""
        if (record := self.records.get(agent_id)) is not None:
            record.delivering = False
            self.settle(record)

    def reopen(self, agent_id: str) -> RunRecord | None:
        """A completed agent resumes (a message arrived): it runs again under the same task id."""
        record = self.records.get(agent_id)
        if record is None or record.live or record.queued:
            return None
        self._ended_cost_usd -= record.cost_usd
        record.status, record.report, record.ended_at = "running", None, None
        record.background, record.notified = True, False
        record.runs += 1
        self.settle(record)
        record.last_activity = self.clock()
        record.seen_seq = {}  # its updates now come from another actor, counting afresh
        return record

    def find(self, name_or_id: str) -> RunRecord | None:
        """An addressable agent: by agent id, else by its name (latest first)."""
        if name_or_id in self.records:
            return self.records[name_or_id]
        named = [r for r in self.records.values() if r.member_name == name_or_id]
        return named[-1] if named else None

    def to_background(self, agent_id: str) -> bool:
        """A sync child moves to the background; False if it has already ended."""
        record = self.records.get(agent_id)
        if record is None or not record.live:
            return False
        record.background, record.notified = True, False
        self.settle(record)
        return True

    def notify_target(self, record: RunRecord) -> str | None:
        """The owner, if it still runs; else the main agent (docs/subagents.md#what-the-parent-gets-back)."""
        owner = self.records.get(record.owner_agent_id or "")
        if owner is not None and owner.live:
            return owner.agent_id
        return self.main_agent_id

    # -- queries --------------------------------------------------------------

    def live_subagents(self) -> int:
        return len(self._running)

    def outstanding(self, owner_agent_id: str) -> list[str]:
        """The keys of the notices this agent's background children may still send it.

        An ended child whose notice is not yet in the mailbox still counts (unclaimed,
        or claimed and on its way): between the end and the delivery its owner must
        keep waiting, or the notice is lost. A live child may have put its own notice
        already (``FinalReport.delivered_at``): the owner leaves out the keys it has read.
        The main agent also waits for the children of owners that ended: their notices
        come to it (``notify_target``).
        """
        return [
            r.notice_key for r in self.open.values()
            if r.background and (r.live or not r.notified or r.delivering)
            and (r.owner_agent_id == owner_agent_id or (owner_agent_id == self.main_agent_id
                                                       and self.notify_target(r) == owner_agent_id))
        ]

    def session_cost_usd(self) -> float:
        return self._ended_cost_usd + sum(r.cost_usd for r in self.open.values() if r.live)

    def session_usage(self) -> SessionUsage:
        """What the whole session has spent: its cost, and tokens and cost per model, over
        every agent (running and ended, killed and failed ones too)."""
        return SessionUsage(self.session_cost_usd(), merge_usage(
            *self._earlier_turns, *(r.model_usage for r in self.records.values())))

    def notices_go_to_main(self, agent_id: str) -> bool:
        """Whether an ended agent's children's notices go on to the main agent (docs/subagents.md#what-the-parent-gets-back:
        background children still notify when their owner is gone): some still run, or it
        was killed or failed with notices it may not have read (nothing resumes it to read
        them; a completed agent is resumed by its unread mail instead)."""
        record = self.records.get(agent_id)
        if record is None or agent_id == self.main_agent_id or self.main_agent_id is None:
            return False
        if self.owned_live_background(agent_id):
            return True
        return record.status not in ("running", "completed") and any(c.background for c in self.children(agent_id))

    def owned_live_background(self, owner_agent_id: str) -> list[RunRecord]:
        """Background agents this one owns that still run or wait in the queue (they notify it when they end)."""
        return [r for r in self.open.values()
                if (r.live or r.queued) and r.background and r.owner_agent_id == owner_agent_id]

    def stalled(self, now: float | None = None) -> list[str]:
        """Live children silent for longer than the stall limit, with no tool in flight."""
        now = self.clock() if now is None else now
        limit_s = self.limits.stall_ms / 1000
        return [
            r.agent_id for r in self.open.values()
            if r.live and r.role != "main" and not r.parked and not r.tools_in_flight
            and now - r.last_activity > limit_s
        ]

    def children(self, agent_id: str) -> list[RunRecord]:
        return [r for r in self.records.values() if r.parent_agent_id == agent_id]

    def tree(self, agent_id: str | None = None) -> UsageTree | None:
        """The agent tree from ``agent_id`` (default: the main agent), with rolled-up usage;
        None before the first run."""
        root = agent_id or self.main_agent_id
        return agent_tree(self.records, root) if root is not None else None

    def settle(self, record: RunRecord) -> None:
        """Keep ``open`` and ``_running`` true after a change to ``record``."""
        owes = record.background and (not record.notified or record.delivering)
        for held, holds in ((self.open, record.live or record.queued or owes),
                            (self._running, record.live and record.role != "main")):
            if holds:
                held[record.agent_id] = record
            else:
                held.pop(record.agent_id, None)

