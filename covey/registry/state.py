"""What the supervisor holds: its books (the plain ``Registry`` core), its collaborators,
and the agents it watches. Each part of the supervisor (``books``, ``watch``, ``launch``,
``supervisor``) is a class over this one."""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Coroutine, Generic, Protocol

from covey.registry.protocols import H, Pool
from covey.agents.records import RunRecord
from covey.agents.transcript import rebuild_history
from covey.agents.worktree import Worktree, finish_worktree_record, resume_place_problem
from covey.registry.core import Registry
from covey.registry.journal import RegistryJournal
from covey.limits import Limits
from covey.registry.runtimes import Runtimes
from covey.teams.messages import Mail

if TYPE_CHECKING:
    from covey.registry.protocols import SessionRuntime
    from covey.agents.spec import AgentSpec
    from covey.registry.runtimes import Put

History = list[dict[str, Any]]
"""A transcript rebuilt as model messages (``rebuild_history``)."""


class Notices(Protocol):
    """The mailbox, as the supervisor uses it (``Mailbox``, or the mailbox actor's handle)."""

    async def put(self, recipient: str, mail: Mail) -> str: ...
    async def pending(self, recipient: str) -> int: ...
    async def close(self, recipient: str, forward_to: str) -> None: ...
    async def reopen(self, recipient: str) -> None: ...


@dataclass(frozen=True)
class Waiting:
    """How to start a queued launch when its turn comes: ``launch``'s arguments, its runtime held."""

    spec: AgentSpec
    runtime: SessionRuntime | None
    lane: str
    output_file: str | None


class SupervisorState(ABC, Generic[H]):
    def __init__(
        self, limits: Limits, *, pool: Pool[H], mailbox: Notices, clock: Callable[[], float] = time.monotonic,
        load_history: Callable[[str], History] = rebuild_history,
        finish_worktree: Callable[[Worktree], Awaitable[dict[str, Any] | None]] = finish_worktree_record,
        put: Put | None = None, place_problem: Callable[[AgentSpec], str | None] = resume_place_problem,
        node_alive: Callable[[str | None], bool] = lambda node: True,
    ) -> None:
        self.core = Registry(limits, clock)
        self.core.on_dequeue = self._dequeued
        self.waiting: dict[str, Waiting] = {}
        """The queued launches' starts, by agent id (their order is the core's ``queue``)."""
        self.pool, self.mailbox = pool, mailbox
        self.load_history, self.finish_worktree = load_history, finish_worktree
        self.place_problem = place_problem
        """Why a finished agent's directory or worktree can no longer be trusted (a resume is refused)."""
        self.runtimes = Runtimes(put)
        self.node_alive = node_alive
        """Whether a Ray node still lives (a lost agent whose node is gone is revived: ``watch``)."""
        self._revivals: dict[str, int] = {}
        self.actors: dict[str, H] = {}
        self.specs: dict[str, AgentSpec] = {}
        """Launched agents' specs without their runtime, kept while the agent may be resumed
        (to the end of the session with teams or in coordinator mode, where SendMessage reaches finished agents)."""
        self.watches: dict[str, asyncio.Task[None]] = {}
        self._resuming: set[str] = set()
        self._forwarded: set[str] = set()
        """Agents whose children's notices the mailbox forwards to the main agent."""
        self.journal: RegistryJournal | None = None
        """Where launches, ends and notices are written before they take effect (a kit's registry,
        which Ray restarts: ``covey.registry.journal``); None: nothing outlives this actor."""
        self._watchdog: asyncio.Task[None] | None = None
        # asyncio keeps only weak references to tasks: hold ours until they finish.
        self._tasks: set[asyncio.Task[Any]] = set()

    @abstractmethod
    def _dequeued(self, record: RunRecord) -> None:
        """A queued launch's turn came (``Registry.on_dequeue``): start it, or deliver its failure."""

    def _spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Stop the watchdog and the give-backs in flight (an in-memory supervisor's end; a
        Ray actor's end stops them with its process)."""
        for task in [self._watchdog, *self._tasks]:
            if task is not None:
                task.cancel()
        self._watchdog = None
