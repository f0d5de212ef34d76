"""What the supervisor tells its journal, as typed events, and the journal that keeps none.

A kit's registry journals each event before it takes effect (``RegistryJournal.record``,
``covey.registry.journal``); any other registry's books outlive nothing (``NoJournal``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from covey.runtime.limits import Limits
    from covey.runtime.ports import SessionRuntime
    from covey.runtime.records import FinalReport, RunRecord
    from covey.runtime.spec import AgentSpec


SPEND = ("usage", "model_usage", "tool_uses", "cost_usd", "turns")
"""A running agent's figures the journal keeps as it reports them (``spent``): a restarted registry
counts what its running agents spent so far (``covey ps``, the session's budget), not nothing."""

@dataclass(frozen=True)
class MainRegistered:
    """The main agent's run was registered."""

    record: RunRecord


@dataclass(frozen=True)
class Started:
    """An agent is about to start on ``actor`` (its runtime is journaled first, once per key)."""

    record: RunRecord
    spec: AgentSpec
    actor: Any
    """The agent actor's handle (pickled: a restarted registry watches it again)."""
    runtime: SessionRuntime | None
    output_file: str | None


@dataclass(frozen=True)
class Queued:
    """A launch waits in the queue: what starts it when its turn comes."""

    record: RunRecord
    spec: AgentSpec
    runtime: SessionRuntime | None
    lane: str
    output_file: str | None


@dataclass(frozen=True)
class Ended:
    """An agent's run ended (or its queued launch did, never started), before its notice goes."""

    agent_id: str
    report: FinalReport


@dataclass(frozen=True)
class Notified:
    """An ended agent's consequences are done: its notice went (a restarted registry owes none)."""

    agent_id: str


@dataclass(frozen=True)
class Spent:
    """A running agent's latest figures (``SPEND``): a restarted registry counts them."""

    agent_id: str
    figures: dict[str, object]


@dataclass(frozen=True)
class Configured:
    """A ready-made registry took its session's limits."""

    limits: Limits


Event = MainRegistered | Started | Queued | Ended | Notified | Spent | Configured


class EventSink(Protocol):
    """Where the supervisor's events go."""

    def record(self, event: Event) -> None: ...


class NoJournal:
    """The journal of a registry whose books outlive nothing (a session's own, the tests)."""

    def record(self, event: Event) -> None:
        """Keeps nothing: no registry reads this one's books back."""
