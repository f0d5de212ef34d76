"""``AgentHandle``: the one place that makes Ray calls on an agent actor."""

from __future__ import annotations

from typing import Any, AsyncIterator, Awaitable

import ray
from ray.exceptions import RayActorError

from covey.actors.base import ActorHandle, _first_line
from covey.agents.spec import AgentSpec
from covey.errors import AgentUnavailable
from covey.registry.answers import Finished
from covey.events import Event
from covey.registry.records import FinalReport, Status
from covey.actors.travel import travelling


class AgentHandle(ActorHandle):
    def __init__(self, actor: Any, name: str = "", node: str | None = None) -> None:
        super().__init__(actor, name)
        self.node = node
        """The Ray node the actor runs on, once known."""
        self.runtime_key: str | None = None
        """The key of the session runtime this handle last sent the actor (it keeps it)."""
        self.last_report: FinalReport | None = None
        """The report that ended the last run ``events`` followed to its end."""

    def __reduce__(self):
        return (AgentHandle, (self.actor, self.name, self.node))

    async def start(self, spec: AgentSpec, *, follow: bool = False, runtime: Any = None, runtime_ref: Any = None) -> str:
        """Start ``spec`` on the actor, with ``runtime`` (default: the spec's own).

        The runtime travels only if the actor does not hold it yet (by key), and as
        ``runtime_ref`` if given: the object ref of that runtime, put in the object store
        once, so that a hundred new actors do not cost the sender a hundred picklings.
        """
        return await self._answer(*self._submit("start", spec, runtime, runtime_ref, follow))

    def run_detached(self, spec: AgentSpec, *, runtime: Any = None, runtime_ref: Any = None,
                     ) -> Awaitable[Finished]:
        """Start a run nobody follows; await the result for its end, in the same call: the
        report and how the actor reset after it (``finish``). A background launch
        needs no word that the run started, so it saves a ``start`` call. The call is sent
        now; a ``cancel`` naming the agent stops the run even if it overtakes this call."""
        return self._answer(*self._submit("run_detached", spec, runtime, runtime_ref))

    def _submit(self, method_name: str, spec: AgentSpec, runtime: Any, runtime_ref: Any, *extra: Any) -> tuple[Any, Any]:
        if not isinstance(spec, AgentSpec):
            raise TypeError(f"expected an AgentSpec, got {type(spec).__name__}")
        runtime = runtime if runtime is not None else spec.runtime
        key = runtime.key if runtime is not None else None
        spec = travelling(spec)
        sent = None if key is not None and key == self.runtime_key else (runtime_ref or runtime)
        # The task name shows which agent an actor serves in the Ray dashboard.
        method = getattr(self.actor, method_name).options(
            name=f"agent:{spec.definition.name}:{spec.agent_id}", enable_task_events=True)
        return method.remote(spec, *extra, sent, key), key

    async def _answer(self, ref: Any, key: str | None) -> Any:
        try:
            answer = await ref
        except RayActorError as exc:
            raise AgentUnavailable(f"agent actor {self.name!r} is gone: {_first_line(exc)}") from None
        self.runtime_key = key
        return answer

    async def follow(self, agent_id: str) -> AsyncIterator[Event | FinalReport]:
        """``agent_id``'s run's events as they happen (a streaming generator call), then its
        report; the actor hears at once that the report arrived, so that it is neither
        recycled nor killed while the report is still on its way here."""
        stream = self.actor.follow.remote()
        try:
            async for ref in stream:
                item = await ref
                if isinstance(item, FinalReport):
                    self.tell("received", agent_id)
                yield item
        except RayActorError as exc:
            raise AgentUnavailable(f"agent actor {self.name!r} died: {_first_line(exc)}") from None

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
                self.tell("cancel", "killed", "the caller stopped following")

    async def wait(self) -> FinalReport:
        return await self.call("wait")

    async def finish(self) -> Finished:
        """The report, and how the actor reset after it ("unchecked": not asked yet)."""
        return await self.call("finish")

    async def detach(self) -> None:
        await self.call("detach")

    async def cancel(self, status: Status = "killed", reason: str = "", agent_id: str | None = None) -> bool:
        """Stop the run; with ``agent_id``, also one whose ``run_detached`` has not arrived yet."""
        return await self.call("cancel", status, reason, agent_id)

    async def ask(self, request: Any) -> Any:
        try:
            return await self.actor.ask.remote(request)
        except (RayActorError, AgentUnavailable):
            return False

    async def answer(self, request_id: str, answer: Any) -> bool:
        try:
            return await self.actor.answer.remote(request_id, answer)
        except (RayActorError, AgentUnavailable):
            return False

    async def reset(self) -> bool:
        try:
            return await self.actor.reset.remote()
        except (RayActorError, AgentUnavailable):
            return False

    async def node_id(self) -> str:
        return await self.call("ping")

    async def pid(self) -> int:
        return await self.call("pid")

    def by_name(self) -> "AgentHandle":
        """This handle as one that travels by its actor's name (``NamedAgentHandle``), if it has one."""
        return by_name(self)

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
        super().__init__(None, name, node)

    @property
    def actor(self) -> Any:
        if self._actor is None:
            try:
                self._actor = ray.get_actor(self.name)
            except ValueError:
                raise AgentUnavailable(f"agent actor {self.name!r} is gone") from None
        return self._actor

    @actor.setter
    def actor(self, value: Any) -> None:
        self._actor = value

    def __reduce__(self):
        return (NamedAgentHandle, (self.name, self.node))


def by_name(handle: AgentHandle | None) -> AgentHandle | None:
    """``handle`` as a ``NamedAgentHandle`` if its actor has a name to find it by."""
    if handle is None or isinstance(handle, NamedAgentHandle) or not handle.name:
        return handle
    return NamedAgentHandle(handle.name, handle.node)


def is_actor_death(exc: BaseException) -> bool:
    return isinstance(exc, (RayActorError, AgentUnavailable))


__all__ = ["AgentHandle", "NamedAgentHandle", "by_name", "is_actor_death", "ray"]
