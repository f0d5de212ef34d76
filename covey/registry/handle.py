"""``RegistryHandle``: the one place that calls the registry actor.

Each method calls the actor's own method (``self.remote.<name>``: ``_RegistryActor``,
that is ``Supervisor``), so the type checker holds both ends of every call to one
signature. Refusals come back as answers and are raised here as covey's exceptions
(``Refused.error``).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, ParamSpec, TypeVar, Unpack

from covey.agent.handle import AgentHandle
from covey.errors import AgentUnavailable
from covey.ray.handle import RayActor, TypedHandle
from covey.registry.batch import LaunchBatch
from covey.runtime.answers import LaunchAnswer, Launched, NeedRuntime, Refused
from covey.runtime.limits import Limits
from covey.runtime.payloads import PoolStats
from covey.runtime.payloads import Held, KeptWorktree, LaunchCall, ProgressFields, SessionUsage
from covey.runtime.records import FinalReport, LaunchRequest, RunRecord
from covey.teams.mailbox_actor import MailboxHandle

P = ParamSpec("P")
R = TypeVar("R")

if TYPE_CHECKING:
    from covey.registry.actor import _RegistryActor
    from covey.runtime.ports import RegistryPort
    from covey.runtime.spec import AgentSpec


RESTART_WAIT_S = 30.0
"""How long a call waits for Ray to bring a restarting registry back (a kit's: ``covey.registry.journal``)."""


class RegistryHandle(TypedHandle["_RegistryActor"]):
    """Calls to a registry that Ray restarts (a kit's) wait for it to come back and are made again:
    a launch made again is answered from the restored books, never started twice."""

    def __init__(self, actor: RayActor, name: str = "") -> None:
        super().__init__(actor, name)
        self._batch = LaunchBatch(self)
        """Launches made in one turn of the event loop, sent in one call; the runtimes sent."""

    async def _call(self, method: Callable[P, Awaitable[R]], /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await self._sent(method, *args, **kwargs)
        except AgentUnavailable as exc:
            if not exc.restarting or not await self.back():
                raise
            return await self._sent(method, *args, **kwargs)

    async def back(self, wait_s: float = RESTART_WAIT_S) -> bool:
        """Whether Ray brought the registry back within ``wait_s`` (False at once if it died for good)."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                return await self._sent(self.remote.ping)
            except AgentUnavailable as exc:
                if not exc.restarting:
                    return False
                await asyncio.sleep(0.1)
        return False

    async def until_gone(self) -> str:
        """Return once the registry has died for good (a restart is waited out)."""
        while True:
            why = await super().until_gone()
            if not await self.back():
                return why

    # -- launching --------------------------------------------------------------------

    async def register_main(self, agent_id: str, model: str, cwd: str, prompt: str = "",
                            output_file: str | None = None, node_id: str | None = None) -> RunRecord:
        return await self._call(self.remote.register_main, agent_id, model, cwd, prompt, output_file, node_id)

    async def reserve(self, request: LaunchRequest) -> RunRecord:
        """The new record; raises the refusal's error if a check fails (``Refused.error``)."""
        answer = await self._call(self.remote.reserve, request)
        if isinstance(answer, Refused):
            raise answer.error()
        return answer

    async def launch(self, request: LaunchRequest, spec: AgentSpec | None, *, follow: bool = False,
                     lane: str = "home", output_file: str | None = None) -> Launched:
        """Reserve, take, start and watch; a refusal raises its error (``Refused.error``): a
        limit ``LimitExceeded``, a type, place or role the model asked for ``ModelBehaviorError``,
        a failed start ``AgentUnavailable``, each with the text the model is shown.

        The actor comes back for a followed (sync) launch only. The spec's runtime
        travels once per handle and key; later launches name it by key (``LaunchBatch``).
        """
        return _launched(await self._batch.launch(LaunchCall(request, spec, follow, lane, output_file)))

    async def launch_one(self, launch: LaunchCall) -> LaunchAnswer:
        """One launch in its own call (``LaunchBatch`` sends a batch of one this way)."""
        return await self._call(self.remote.launch, launch.request, launch.spec, launch.follow, launch.lane,
                                launch.output_file, launch.runtime_key)

    async def launch_many(self, launches: list[LaunchCall]) -> AsyncIterator[tuple[int, LaunchAnswer]]:
        """The answers to ``launches`` as ``(index, answer)``, each as soon as it is ready; those not
        answered when the registry restarted are sent again."""
        answered: set[int] = set()
        try:
            async for index, answer in self._stream(self.remote.launch_many, launches):
                answered.add(index)
                yield index, answer
        except AgentUnavailable as exc:
            if not exc.restarting or not await self.back():
                raise
            rest = [index for index in range(len(launches)) if index not in answered]
            async for index, answer in self._stream(self.remote.launch_many, [launches[i] for i in rest]):
                yield rest[index], answer

    async def take(self, lane: str = "home") -> AgentHandle:
        return await self._call(self.remote.take, lane)

    async def release(self, actor: AgentHandle) -> bool:
        return await self._call(self.remote.release, actor)

    async def warm(self, n: int, lane: str = "home") -> int:
        return await self._call(self.remote.warm, n, lane)

    async def resume(self, agent_id: str) -> str | None:
        return await self._call(self.remote.resume, agent_id)

    # -- the session -------------------------------------------------------------------

    async def configure(self, limits: Limits) -> None:
        await self._call(self.remote.configure, limits)

    async def recycle(self, session_id: str) -> None:
        await self._call(self.remote.recycle, session_id)

    async def session(self) -> tuple[str, MailboxHandle]:
        return await self._call(self.remote.session)

    # -- what an agent reports ---------------------------------------------------------

    async def progress(self, agent_id: str, **fields: Unpack[ProgressFields]) -> str | None:
        """Report ``agent_id``'s figures and wait until the registry has them; why the session's
        budget is spent, if it is (the agent then stops: ``error_max_budget_usd``)."""
        return await self._call(self.remote.progress, agent_id, **fields)

    def tell_progress(self, agent_id: str, **fields: Unpack[ProgressFields]) -> None:
        """Report ``agent_id``'s figures without waiting (``fields["seq"]`` orders them)."""
        self._tell(self.remote.progress, agent_id, **fields)

    def tell_parked(self, agent_id: str, parked: bool, seq: int) -> None:
        """``agent_id``'s own turn ended and it waits for its background children (or woke)."""
        self._tell(self.remote.set_parked, agent_id, parked, seq)

    async def finish_main(self, agent_id: str, report: FinalReport) -> None:
        await self._call(self.remote.finish_main, agent_id, report)

    async def abandon(self, agent_id: str) -> None:
        await self._call(self.remote.abandon, agent_id)

    async def to_background(self, agent_id: str) -> bool:
        return await self._call(self.remote.to_background, agent_id)

    # -- questions ---------------------------------------------------------------------

    async def find(self, name_or_id: str) -> RunRecord | None:
        return await self._call(self.remote.find, name_or_id)

    async def record(self, agent_id: str) -> RunRecord | None:
        return await self._call(self.remote.record, agent_id)

    async def records(self) -> list[RunRecord]:
        return await self._call(self.remote.records)

    async def outstanding(self, owner_agent_id: str) -> list[str]:
        """The keys of the notices this agent's background children may still send it."""
        return await self._call(self.remote.outstanding, owner_agent_id)

    async def report_of(self, agent_id: str) -> FinalReport | None:
        """The ended run's report as the registry recorded it; None if the registry is gone too."""
        try:
            return await self._call(self.remote.report_of, agent_id)
        except AgentUnavailable:
            return None

    async def tree(self, agent_id: str | None = None) -> dict[str, Any]:
        """The agent tree (``AgentTree``) as a plain dict, for JSON and display; empty before a run."""
        tree = await self._call(self.remote.tree, agent_id)
        return dict(tree) if tree is not None else {}

    async def session_usage(self) -> SessionUsage:
        return await self._call(self.remote.session_usage)

    async def pool_stats(self) -> PoolStats:
        return await self._call(self.remote.pool_stats)

    async def held(self) -> Held:
        return await self._call(self.remote.held)

    async def actor_of(self, agent_id: str) -> AgentHandle | None:
        """A running agent's actor (``covey kill``, tests), or None."""
        return await self._call(self.remote.actor_of, agent_id)

    # -- stopping ----------------------------------------------------------------------

    async def kill_agent(self, agent_id: str, reason: str = "killed on request") -> bool:
        return await self._call(self.remote.kill_agent, agent_id, "killed", reason)

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        return await self._call(self.remote.wait_idle, timeout_s)

    async def stop_all(self, reason: str) -> list[KeptWorktree]:
        """Stop every running sub-agent; the worktrees kept by their cleanup."""
        return await self._call(self.remote.stop_all, reason)


if TYPE_CHECKING:
    _: type[RegistryPort] = RegistryHandle  # the type checker holds the handle to the port here


def _launched(answer: LaunchAnswer) -> Launched:
    """``answer`` unless it is a refusal: that is raised as its error."""
    if isinstance(answer, Refused):
        raise answer.error()
    if isinstance(answer, NeedRuntime):  # LaunchBatch sends the runtime whole after this answer
        raise AgentUnavailable("the registry asked for the session runtime twice")
    return answer
