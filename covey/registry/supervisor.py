"""The registry's supervision rules as plain Python: launch, watch, complete, notify, stop.

``Supervisor`` keeps its books in the plain ``Registry`` core and is given every
collaborator that touches the outside: the warm pool, the mailbox, a monotonic
clock, the transcript loader, the worktree finisher and a way to put the session
runtime in the object store. The Ray actor (``covey.registry.actor``) is this class
with the real ones; the tests build one with fakes.

Each job is a module, each a class over the one before: ``state`` (what it holds),
``books`` (questions and small updates), ``watch`` (a run's end and a resume),
``stop`` (kill, stop all, the stall watchdog), ``launch``; ``notify`` delivers the
notification.
"""

from __future__ import annotations

from covey.runtime.ports import H
from covey.registry.books import REPORT_WAIT_S
from covey.registry.launch import Launching
from covey.registry.stop import CANCEL_GRACE_S

__all__ = ["CANCEL_GRACE_S", "REPORT_WAIT_S", "Supervisor"]


class Supervisor(Launching[H]):
    """The registry's rules over agents of type ``H`` (``AgentHandle`` in the Ray actor)."""
