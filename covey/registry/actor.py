"""The registry as a Ray actor: a shell over ``Supervisor``, and its handle.

The actor builds the supervisor with its real collaborators (the session's warm
pool of agent actors, the mailbox actor, ``ray.put``) and forwards each call;
every rule lives in ``covey.registry.supervisor``. ``RegistryHandle`` is the one
place that calls it, and turns its typed refusals into covey's exceptions.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import ray
from ray.exceptions import RayActorError

from covey.actors.base import ActorHandle, _first_line
from covey.actors.handle import AgentHandle
from covey.actors.pool import AgentFactory, BorrowedPool, WarmPool
from covey.errors import AgentUnavailable
from covey.registry.answers import Launched, NeedRuntime, Refused
from covey.registry.limits import Limits
from covey.registry.records import FinalReport, LaunchRequest, RunRecord
from covey.registry.supervisor import CANCEL_GRACE_S, REPORT_WAIT_S, Supervisor
from covey.actors.travel import travelling


class _RegistryActor:
    """Ray shell: builds the supervisor with the real collaborators; each method forwards to it."""

    def __init__(
        self, limits: Limits, mailbox: Any, session_id: str = "", pool_sizes: dict[str, int] | None = None,
        home_node_id: str | None = None, preload: tuple[str, ...] = (), lender: Any = None,
    ) -> None:
        """``lender``: the covey service's shared pool, which this session borrows agent
        actors from (None: the session owns a warm pool of its own)."""
        self.session_id, self.mailbox, self.lender = session_id, mailbox, lender
        if lender is not None:
            pool: Any = BorrowedPool(lender, session_id)
        else:
            peers = (ray.get_runtime_context().current_actor, mailbox)
            factory = AgentFactory(session_id, home_node_id, preload=preload, peers=peers)
            pool = WarmPool(factory.create, pool_sizes or {})
            for lane in pool_sizes or {}:
                pool.fill(lane)
        self.supervisor = Supervisor(limits, pool=pool, mailbox=mailbox, put=ray.put)

    async def configure(self, limits: Limits) -> None:
        """A ready-made registry (a service's session kit) takes its session's limits."""
        self.supervisor.core.limits = limits

    async def recycle(self, session_id: str) -> None:
        """Serve another session (a covey service's kit, once its session ended and every
        agent of it was given back or killed): a fresh supervisor, no record of the last."""
        await self.supervisor.close()
        self.supervisor = Supervisor(Limits(), pool=BorrowedPool(self.lender, session_id), mailbox=self.mailbox,
                                     put=ray.put)
        self.session_id = session_id

    async def session(self) -> tuple[str, Any]:
        """The session this registry serves now, and its mailbox (``covey ps``, ``covey team``)."""
        return self.session_id, self.mailbox

    async def release(self, actor: AgentHandle) -> bool:
        """Give ``actor`` back to the pool once its run is over (a served session's main agent)."""
        return await self.supervisor.pool.give_back(actor)

    async def launch_many(self, launches: list[tuple[Any, ...]]) -> AsyncIterator[tuple[int, Any]]:
        async for answered in self.supervisor.launch_many(launches):
            yield answered

    async def register_main(self, *args: Any, **kwargs: Any) -> RunRecord:
        return await self.supervisor.register_main(*args, **kwargs)

    async def reserve(self, request: LaunchRequest) -> RunRecord | Refused:
        return await self.supervisor.reserve(request)

    async def launch(self, *args: Any, **kwargs: Any) -> Launched | Refused | NeedRuntime:
        return await self.supervisor.launch(*args, **kwargs)

    async def resume(self, agent_id: str) -> str | None:
        return await self.supervisor.resume(agent_id)

    async def take(self, lane: str = "home") -> AgentHandle:
        return await self.supervisor.take(lane)

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self.supervisor.warm(n, lane)

    async def pool_stats(self) -> dict[str, Any]:
        return await self.supervisor.pool_stats()

    async def held(self) -> dict[str, int]:
        return await self.supervisor.held()

    async def find(self, name_or_id: str) -> RunRecord | None:
        return await self.supervisor.find(name_or_id)

    async def abandon(self, agent_id: str) -> None:
        await self.supervisor.abandon(agent_id)

    async def finish_main(self, agent_id: str, report: FinalReport) -> None:
        await self.supervisor.finish_main(agent_id, report)

    async def progress(self, agent_id: str, **fields: Any) -> None:
        await self.supervisor.progress(agent_id, **fields)

    async def set_parked(self, agent_id: str, parked: bool, seq: int | None = None) -> None:
        await self.supervisor.set_parked(agent_id, parked, seq)

    async def to_background(self, agent_id: str) -> bool:
        return await self.supervisor.to_background(agent_id)

    async def outstanding(self, owner_agent_id: str) -> list[str]:
        return await self.supervisor.outstanding(owner_agent_id)

    async def kill_agent(self, *args: Any, **kwargs: Any) -> bool:
        return await self.supervisor.kill_agent(*args, **kwargs)

    async def record(self, agent_id: str) -> RunRecord | None:
        return await self.supervisor.record(agent_id)

    async def records(self) -> list[RunRecord]:
        return await self.supervisor.records()

    async def report_of(self, agent_id: str, timeout_s: float = REPORT_WAIT_S) -> FinalReport | None:
        return await self.supervisor.report_of(agent_id, timeout_s)

    async def actor_of(self, agent_id: str) -> Any:
        return await self.supervisor.actor_of(agent_id)

    async def tree(self, agent_id: str | None = None) -> dict[str, Any]:
        return await self.supervisor.tree(agent_id)

    async def session_usage(self) -> tuple[float, dict[str, Any]]:
        return await self.supervisor.session_usage()

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        return await self.supervisor.wait_idle(timeout_s)

    async def stop_all(self, reason: str, grace_s: float = CANCEL_GRACE_S) -> list[dict[str, Any]]:
        return await self.supervisor.stop_all(reason, grace_s)

    async def sentinel(self) -> None:
        """Never answers: the session learns of this actor's death by the call failing."""
        await asyncio.Event().wait()


def _answer(waiting: asyncio.Future, answer: Any) -> None:
    if waiting.done():  # answered already, or its caller gave up waiting
        return
    if isinstance(answer, Exception):
        waiting.set_exception(answer)
    else:
        waiting.set_result(answer)


def registry_actor_class(**options: Any):
    # No Ray task events for its calls: several per agent, and nobody looks for them in the dashboard.
    return ray.remote(num_cpus=0, max_restarts=0, enable_task_events=False, **options)(_RegistryActor)


class RegistryHandle(ActorHandle):
    def __init__(self, actor: Any, name: str = "") -> None:
        super().__init__(actor, name)
        self._runtime_sent: dict[str, asyncio.Future[bool]] = {}
        """Runtime keys this handle has sent the registry: done, or on their way."""
        self._batch: list[tuple[tuple[Any, ...], asyncio.Future]] = []
        """Launches made since the event loop last came round: they go in one call."""
        self._sending: set[asyncio.Task] = set()

    async def register_main(
        self, agent_id: str, model: str, cwd: str, prompt: str = "", output_file: str | None = None,
        node_id: str | None = None,
    ) -> RunRecord:
        return await self.call("register_main", agent_id, model, cwd, prompt, output_file, node_id)

    async def reserve(self, request: LaunchRequest) -> RunRecord:
        """The new record; raises the refusal's error if a check fails (``Refused.error``)."""
        return self._launched(await self.call("reserve", request))

    async def launch(
        self, request: LaunchRequest, spec: Any, *, follow: bool = False, lane: str = "home",
        output_file: str | None = None,
    ) -> Launched:
        """Reserve, take, start and watch; a refusal raises its error (``Refused.error``): a
        limit ``LimitExceeded``, a type, place or role the model asked for ``ModelBehaviorError``,
        a failed start ``AgentUnavailable``, each with the text the model is shown.

        The actor comes back for a followed (sync) launch only. The spec's runtime
        travels once per handle and key; later launches name it by key.
        """
        runtime = spec.runtime if spec is not None else None
        if runtime is not None and await self._registry_holds(runtime.key):
            answer = await self._batched((request, travelling(spec), follow, lane, output_file, runtime.key))
            if not isinstance(answer, NeedRuntime):
                return self._launched(answer)
            self._runtime_sent.pop(runtime.key, None)
        sending = None
        if runtime is not None and runtime.key not in self._runtime_sent:
            sending = self._runtime_sent[runtime.key] = asyncio.get_running_loop().create_future()
        if runtime is not None and spec.model is not None and spec.model is runtime.model:
            spec = spec.model_copy(update={"model": None})  # it travels (sealed) in the runtime
        try:
            answer = await self.call("launch", request, spec, follow, lane, output_file)
        finally:
            if sending is not None and not sending.done():
                sending.set_result(True)  # the registry has it, whatever the answer was
        return self._launched(answer)

    def _batched(self, launch: tuple[Any, ...]) -> asyncio.Future:
        """The answer to ``launch``, sent with the other launches made in this turn of the
        event loop: the Agent calls of one message reach the registry in one call, not one
        each (their tool calls run concurrently, so they arrive here together)."""
        loop = asyncio.get_running_loop()
        if not self._batch:
            loop.call_soon(self._send_batch)
        answer = loop.create_future()
        self._batch.append((launch, answer))
        return answer

    def _send_batch(self) -> None:
        batch, self._batch = self._batch, []
        task = asyncio.ensure_future(self._deliver(batch))
        self._sending.add(task)  # asyncio keeps only a weak reference
        task.add_done_callback(self._sending.discard)

    async def _deliver(self, batch: list[tuple[tuple[Any, ...], asyncio.Future]]) -> None:
        waiting = [future for _, future in batch]
        try:
            if len(batch) == 1:
                _answer(waiting[0], await self.call("launch", *batch[0][0]))
                return
            async for ref in self.actor.launch_many.remote([launch for launch, _ in batch]):
                index, answer = await ref
                _answer(waiting[index], answer)
        except Exception as exc:  # the registry is gone: every caller still waiting hears it
            if isinstance(exc, RayActorError):
                exc = AgentUnavailable(f"actor {self.name!r} is gone: {_first_line(exc)}")
            for future in waiting:
                _answer(future, exc)

    async def _registry_holds(self, key: str) -> bool:
        """Whether the registry has this runtime; a launch sending it right now is awaited,
        so twenty launches in one message send it once, not twenty times."""
        sent = self._runtime_sent.get(key)
        if sent is None:
            return False
        try:
            return await asyncio.shield(sent)
        except Exception:
            return False

    @staticmethod
    def _launched(answer: Any) -> Any:
        """``answer`` unless it is a refusal: that is raised as its error."""
        if isinstance(answer, Refused):
            raise answer.error()
        return answer

    async def take(self, lane: str = "home") -> AgentHandle:
        return await self.call("take", lane)

    async def configure(self, limits: Limits) -> None:
        await self.call("configure", limits)

    async def release(self, actor: AgentHandle) -> bool:
        return await self.call("release", actor)

    async def recycle(self, session_id: str) -> None:
        await self.call("recycle", session_id)

    async def session(self) -> tuple[str, Any]:
        return await self.call("session")

    async def find(self, name_or_id: str) -> RunRecord | None:
        return await self.call("find", name_or_id)

    async def resume(self, agent_id: str) -> str | None:
        return await self.call("resume", agent_id)

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self.call("warm", n, lane)

    async def pool_stats(self) -> dict[str, Any]:
        return await self.call("pool_stats")

    async def held(self) -> dict[str, int]:
        return await self.call("held")

    async def abandon(self, agent_id: str) -> None:
        await self.call("abandon", agent_id)

    async def to_background(self, agent_id: str) -> bool:
        return await self.call("to_background", agent_id)

    async def outstanding(self, owner_agent_id: str) -> list[str]:
        """The keys of the notices this agent's background children may still send it."""
        return await self.call("outstanding", owner_agent_id)

    async def kill_agent(self, agent_id: str, reason: str = "killed on request") -> bool:
        return await self.call("kill_agent", agent_id, "killed", reason)

    async def record(self, agent_id: str) -> RunRecord | None:
        return await self.call("record", agent_id)

    async def report_of(self, agent_id: str) -> FinalReport | None:
        """The ended run's report as the registry recorded it; None if the registry is gone too."""
        try:
            return await self.call("report_of", agent_id)
        except AgentUnavailable:
            return None

    async def records(self) -> list[RunRecord]:
        return await self.call("records")

    async def tree(self, agent_id: str | None = None) -> dict[str, Any]:
        return await self.call("tree", agent_id)

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        return await self.call("wait_idle", timeout_s)

    async def stop_all(self, reason: str) -> list[dict[str, Any]]:
        """Stop every running sub-agent; the worktrees kept by their cleanup."""
        return await self.call("stop_all", reason)
