"""What the registry and the pools need of their collaborators, as types (no ``Any``).

- ``AgentActor``: the agent actor's remote methods (``_AgentActor`` runs them); its
  handle (``AgentHandle``) calls them, typed, through ``TypedHandle``.
- ``Agent``: one agent actor as the pool and the registry use it (``AgentHandle``, or a
  test's fake).
- ``Pool``: where the registry takes agents from and gives them back to (``WarmPool``,
  ``BorrowedPool``, a test's fake).
- ``Lender``: the service's shared pool as a served session's ``BorrowedPool`` borrows
  from it (``SharedPoolHandle``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Hashable, Protocol, TypeAlias, TypeVar

if TYPE_CHECKING:
    from ray import ObjectRef

    from covey.actors.handle import AgentHandle
    from covey.registry.payloads import PoolStats
    from covey.agents.spec import AgentSpec
    from covey.events import Event
    from covey.registry.answers import Finished
    from covey.agents.records import FinalReport, Status
    from covey.agents.runtime import SessionRuntime

    Runtime: TypeAlias = "SessionRuntime | ObjectRef[SessionRuntime] | None"
    """A session runtime as it is sent: itself, or its object ref (Ray hands the actor the value)."""


class AgentActor(Protocol):
    """The agent actor's remote methods (``covey.actors.agent._AgentActor``)."""

    async def start(self, spec: AgentSpec, follow: bool = False, runtime: Runtime = None,
                    runtime_key: str | None = None) -> str: ...
    async def run_detached(self, spec: AgentSpec, runtime: Runtime = None, runtime_key: str | None = None,
                           ) -> Finished: ...
    def follow(self) -> AsyncIterator[Event | FinalReport]: ...
    async def wait(self) -> FinalReport: ...
    async def finish(self) -> Finished: ...
    async def detach(self) -> None: ...
    async def received(self, agent_id: str) -> None: ...
    async def cancel(self, status: Status = "killed", reason: str = "", agent_id: str | None = None) -> bool: ...
    async def ask(self, request: object) -> object: ...
    async def answer(self, request_id: str, answer: object) -> bool: ...
    async def reset(self) -> bool: ...
    async def ping(self) -> str: ...
    async def pid(self) -> int: ...
    async def loaded_modules(self) -> list[str]: ...


class Agent(Hashable, Protocol):
    """One agent actor, as the pool and the registry hold it."""

    @property
    def node(self) -> str | None: ...
    async def start(self, spec: AgentSpec, *, follow: bool = False, runtime: SessionRuntime | None = None,
                    runtime_ref: ObjectRef[SessionRuntime] | None = None) -> str: ...
    def run_detached(self, spec: AgentSpec, *, runtime: SessionRuntime | None = None,
                     runtime_ref: ObjectRef[SessionRuntime] | None = None) -> Awaitable[Finished]: ...
    async def finish(self) -> Finished: ...
    async def cancel(self, status: Status = "killed", reason: str = "", agent_id: str | None = None) -> bool: ...
    async def reset(self) -> bool: ...
    def kill(self) -> None: ...


H = TypeVar("H", bound=Agent)


class Pool(Protocol[H]):
    """Agents to take and give back, by lane ("home": on the session's node; "any")."""

    async def take(self, lane: str = "home") -> H: ...
    async def give_back(self, actor: H, clean: bool | None = None) -> bool: ...
    async def warm(self, n: int, lane: str = "home") -> int: ...
    def stats(self) -> PoolStats: ...


class Lender(Protocol):
    """The service's shared pool, lending agent actors to the session ``session_id``."""

    async def take(self, lane: str, session_id: str) -> AgentHandle: ...
    async def give_back(self, actor: AgentHandle, clean: bool) -> bool: ...
    async def warm(self, n: int, lane: str = "home") -> int: ...


if TYPE_CHECKING:
    from covey.actors.agent import _AgentActor
    from covey.actors.shared_pool import SharedPoolHandle

    def _conforming(actor: _AgentActor, lender: SharedPoolHandle) -> tuple[AgentActor, Lender]:
        """Never called: the type checker holds the real classes to these protocols here."""
        return actor, lender
