"""Who delivers a task notice, and when mail reaches or resumes an agent: the rules in one place.

Two parties can put an ended background agent's notice in its owner's mailbox: the
agent's own actor, in one call as its run ends, and the registry, once the report has
reached it (two hops: the report to the registry, the notice to the mailbox). The actor
takes the common case, a background child that ended by itself; the registry takes the
rest, because each needs something only the registry does after the end (a resumed
run, a teammate's released tasks, a stopped run, a dead actor, an agent that mail is
about to resume). Whichever sends it, the mailbox queues one notice per key
(``agent-id#run``), so a notice sent by both is read once.

Plain functions over plain facts: the agent actor (``covey.agent.notice``), the
inbox (``covey.agent.inbox``) and the registry's supervisor (``_notify``) ask here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EndedRun:
    """What the rules read about an agent whose run just ended."""

    status: str
    """``completed``, ``failed`` or ``killed``."""
    background: bool
    """It ran in the background: its owner hears of its end by a notice, not a tool result."""
    has_owner: bool
    """A child (a parent agent waits for the notice); the main agent has no owner."""
    teammate: bool = False
    """A team member: its unfinished board tasks go in the notice, which the registry releases."""
    resumed: bool = False
    """It ran from a history (resumed by mail, or a conversation's next turn): the registry reopened its record."""
    stopped: bool = False
    """Stopped from outside (a kill, a cancel, the stall watchdog): the registry stopped it and knows."""
    messaging: bool = False
    """A session with teams or in coordinator mode: SendMessage reaches any agent, finished or not."""
    launched_background: bool = False
    """It launched background work of its own, whose notices come to it."""


def mail_may_resume(ending: EndedRun) -> bool:
    """Whether mail that came during the agent's last turn resumes it once it has ended.

    A leaf agent ends without a last look at its mailbox (that would cost every child a
    round trip), so mail that came during its last turn resumes it, as mail to a finished
    agent does (docs/teams.md). Only a completed agent: a killed or failed one stays
    ended. Not a teammate: it drains before it ends. And only if someone could have
    written: anyone, in a session with messaging; else only its own background children.
    """
    if ending.status != "completed" or ending.teammate:
        return False
    return ending.messaging or ending.launched_background


def agent_delivers(ending: EndedRun) -> bool:
    """Whether the agent's own actor puts its notice (else the registry does).

    The actor does for a background child that ended by itself, unless the registry
    must act first: a teammate (its released tasks go in the notice), a resumed run
    (its record was reopened), a stopped run, and an agent that mail may resume (the
    registry resumes it right after the notice, before its owner can conclude that
    nothing more is coming).
    """
    if not (ending.background and ending.has_owner):
        return False  # a sync child's report goes to its caller; the main agent has no owner
    if ending.teammate or ending.resumed or ending.stopped:
        return False
    return not mail_may_resume(ending)


def registry_delivers(delivered_at: float | None) -> bool:
    """Whether the registry puts the notice of a run it claimed: every one the agent did
    not put itself (``delivered_at``, set by the actor). If the actor put it and died
    before saying so, the mailbox drops the registry's copy: both carry the run's key."""
    return delivered_at is None


def mail_may_come(*, main: bool, resumed: bool, messaging: bool) -> bool:
    """Whether mail can reach an agent that has launched nothing, so its inbox must look.

    The main agent (notices of orphaned descendants come to it,
    docs/subagents.md#what-the-parent-gets-back), a resumed agent (mail woke it), and
    anyone in a session with messaging (SendMessage reaches any agent by name or id).
    Otherwise only its own background children write to it, and it knows when it has some.
    """
    return main or resumed or messaging
