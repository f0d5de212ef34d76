"""``AgentHandle``: the one place that makes Ray calls on an agent actor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable

import ray
from ray.exceptions import RayActorError

from covey.errors import AgentUnavailable
from covey.events import Event
from covey.ray.handle import RayActor, TypedHandle
from covey.runtime.answers import Finished
from covey.runtime.ports import AgentPort
from covey.runtime.records import FinalReport, Status
from covey.runtime.spec import AgentSpec
from covey.runtime.travel import travelling

if TYPE_CHECKING:
    from ray import ObjectRef

    from covey.agent.actor import _AgentActor
    from covey.runtime.ports import Question, Reply, SessionRuntime


class AgentHandle(TypedHandle["_AgentActor"]):
    def __init__(self, actor: RayActor, name: str = "", node: str | None = None) -> None:
        super().__init__(actor, name)
        self.node = node
        """The Ray node the actor runs on, once known."""
        self.runtime_key: str | None = None
        """The key of the session runtime this handle last sent the actor (it keeps it)."""
        self.last_report: FinalReport | None = None
        """The report that ended the last run ``events`` followed to its end."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (AgentHandle, (self.actor, self.name, self.node))

    async def start(self, spec: AgentSpec, *, follow: bool = False, runtime: SessionRuntime | None = None,
                    runtime_ref: ObjectRef[SessionRuntime] | None = None) -> str:
        """Start ``spec`` on the actor, with ``runtime`` (default: the spec's own).

        The runtime travels only if the actor does not hold it yet (by key), and as
        ``runtime_ref`` if given: the object ref of that runtime, put in the object store
        once, so that a hundred new actors do not cost the sender a hundred picklings.
        """
        key, sent = self._runtime_to_send(spec, runtime, runtime_ref)
        answer = await self._sent_as(self._task_name(spec), self.remote.start, travelling(spec), follow, sent, key)
        self.runtime_key = key
        return answer

    def run_detached(self, spec: AgentSpec, *, runtime: SessionRuntime | None = None,
                     runtime_ref: ObjectRef[SessionRuntime] | None = None) -> Awaitable[Finished]:
        """Start a run nobody follows; await the result for its end, in the same call: the
        report and how the actor reset after it (``finish``). A background launch
        needs no word that the run started, so it saves a ``start`` call. The call is sent
        now; a ``cancel`` naming the agent stops the run even if it overtakes this call."""
        key, sent = self._runtime_to_send(spec, runtime, runtime_ref)
        answer = self._sent_as(self._task_name(spec), self.remote.run_detached, travelling(spec), sent, key)
        return self._keeping(key, answer)

    async def _keeping(self, key: str | None, answer: Awaitable[Finished]) -> Finished:
        finished = await answer
        self.runtime_key = key
        return finished

    def _runtime_to_send(self, spec: AgentSpec, runtime: SessionRuntime | None,
                         runtime_ref: ObjectRef[SessionRuntime] | None,
                         ) -> tuple[str | None, SessionRuntime | ObjectRef[SessionRuntime] | None]:
        """The runtime's key, and what travels of it: nothing if the actor holds that key."""
        if not isinstance(spec, AgentSpec):
            raise TypeError(f"expected an AgentSpec, got {type(spec).__name__}")
        runtime = runtime if runtime is not None else spec.runtime
        key = runtime.key if runtime is not None else None
        if key is not None and key == self.runtime_key:
            return key, None
        return key, runtime_ref or runtime

    @staticmethod
    def _task_name(spec: AgentSpec) -> dict[str, object]:
        # The task name shows which agent an actor serves in the Ray dashboard.
        return {"name": f"agent:{spec.definition.name}:{spec.agent_id}", "enable_task_events": True}

    async def follow(self, agent_id: str) -> AsyncIterator[Event | FinalReport]:
        """``agent_id``'s run's events as they happen (a streaming generator call), then its
        report; the actor hears at once that the report arrived, so that it is neither
        recycled nor killed while the report is still on its way here."""
        async for batch in self._stream(self.remote.follow_batches):  # what was ready together
            for item in batch:
                if isinstance(item, FinalReport):
                    self._tell(self.remote.received, agent_id)
                yield item

    async def events(self, spec: AgentSpec) -> AsyncIterator[Event]:
        """Start ``spec`` and follow it; if the caller stops early, the run is cancelled."""
        await self.start(spec, follow=True)
        self.last_report = None
        finished = False
        try:
            async for event in self.follow(spec.agent_id):
                if isinstance(event, FinalReport):
                    self.last_report = event  # what ``wait`` would answer, without asking again
                else:
                    yield event
            finished = True
        finally:
            if not finished:
                self._tell(self.remote.cancel, "killed", "the caller stopped following")

    async def wait(self) -> FinalReport:
        return await self._call(self.remote.wait)

    async def finish(self) -> Finished:
        """The report, and how the actor reset after it ("unchecked": not asked yet)."""
        return await self._call(self.remote.finish)

    async def ping(self) -> str:
        return await self._call(self.remote.ping)

    async def report_for(self, agent_id: str) -> Finished:
        """``agent_id``'s run's end on this actor, for a registry that restarted while it ran."""
        return await self._call(self.remote.report_for, agent_id)

    async def detach(self) -> None:
        await self._call(self.remote.detach)

    async def cancel(self, status: Status = "killed", reason: str = "", agent_id: str | None = None) -> bool:
        """Stop the run; with ``agent_id``, also one whose ``run_detached`` has not arrived yet."""
        return await self._call(self.remote.cancel, status, reason, agent_id)

    async def ask(self, request: Question) -> Reply:
        """Put a permission prompt, hook call or MCP message (``request``) to whoever reads this
        agent's run; the answer, or False (denied) if the actor is gone."""
        try:
            return await self._call(self.remote.ask, request)
        except AgentUnavailable:
            return False

    def tell_relay(self, event: Event) -> None:
        """Show ``event`` in the stream of this agent's run, without waiting (dropped if nobody follows)."""
        self._tell(self.remote.relay, event)

    async def answer(self, request_id: str, answer: Reply) -> bool:
        """Answer the run's permission prompt or hook call; False if the actor is gone."""
        try:
            return await self._call(self.remote.answer, request_id, answer)
        except AgentUnavailable:
            return False

    async def reset(self) -> bool:
        """Whether the actor came back clean from its run; False if it is gone."""
        try:
            return await self._call(self.remote.reset)
        except AgentUnavailable:
            return False

    async def node_id(self) -> str:
        return await self._call(self.remote.ping)

    async def pid(self) -> int:
        return await self._call(self.remote.pid)

    async def loaded_modules(self) -> list[str]:
        """The modules the actor's process has imported (tests check a run adds none)."""
        return await self._call(self.remote.loaded_modules)

    def by_name(self) -> "AgentHandle":
        """This handle as one that travels by its actor's name (``NamedAgentHandle``), if it has one."""
        return NamedAgentHandle(self.name, self.node) if self.name and not isinstance(self, NamedAgentHandle) else self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AgentHandle) and other.actor._actor_id == self.actor._actor_id

    def __hash__(self) -> int:
        return hash(self.actor._actor_id)


class NamedAgentHandle(AgentHandle):
    """A named agent actor's handle that travels as its name and looks the actor up
    (``ray.get_actor``) when first used. Unpickling a handle to an actor a process has
    never called costs it about 3 ms of CPU and a GCS subscription: the session's root
    agent travels to every child this way, and most children never call it (it relays
    permission prompts only)."""

    def __init__(self, name: str, node: str | None = None) -> None:
        self._actor: RayActor = None
        super().__init__(None, name, node)

    @property  # looked up on first use (the base class holds it as given)
    def actor(self) -> RayActor:
        if self._actor is None:
            try:
                self._actor = ray.get_actor(self.name)
            except ValueError:
                raise AgentUnavailable(f"agent actor {self.name!r} is gone") from None
        return self._actor

    @actor.setter
    def actor(self, value: RayActor) -> None:
        self._actor = value

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (NamedAgentHandle, (self.name, self.node))


if TYPE_CHECKING:
    _: type[AgentPort] = AgentHandle  # the type checker holds the handle to the port here


def by_name(handle: AgentHandle | None) -> AgentHandle | None:
    """``handle`` as a ``NamedAgentHandle`` if its actor has a name to find it by."""
    return handle.by_name() if handle is not None else None


def is_actor_death(exc: BaseException) -> bool:
    return isinstance(exc, (RayActorError, AgentUnavailable))


__all__ = ["AgentHandle", "NamedAgentHandle", "by_name", "is_actor_death", "ray"]
