"""In-memory stand-ins for the supervisor's collaborators: agent actors, the pool, a clock."""

from __future__ import annotations

import asyncio
from typing import Any

from covey.definitions.definition import AgentDefinition
from covey.errors import AgentUnavailable
from covey.runtime.answers import Finished
from covey.runtime.ports import SessionRuntime
from covey.runtime.records import FinalReport, LaunchRequest
from covey.runtime.spec import AgentSpec
from covey.tools.options import ToolOptions


class FakeActor:
    """An agent actor whose run ends when the test says so (``end``, ``die``)."""

    def __init__(self, name: str = "actor") -> None:
        self.name, self.node = name, "node-1"
        self.started: list[tuple[Any, dict[str, Any]]] = []
        self.cancels: list[tuple[str, str, str | None]] = []
        self.killed = False
        self.cancel_worktree: dict[str, Any] | None = None
        """What this actor's cleanup keeps when it is cancelled (its report names it)."""
        self._end: asyncio.Future | None = None

    async def start(self, spec: Any, *, follow: bool = False, runtime: Any = None, runtime_ref: Any = None) -> str:
        self._begin(spec, follow=follow, runtime=runtime, runtime_ref=runtime_ref)
        return spec.agent_id

    def run_detached(self, spec: Any, *, runtime: Any = None, runtime_ref: Any = None) -> asyncio.Future:
        return self._begin(spec, runtime=runtime, runtime_ref=runtime_ref)

    def _begin(self, spec: Any, **how: Any) -> asyncio.Future:
        self.started.append((spec, how))
        self._end = asyncio.get_running_loop().create_future()
        return self._end

    def __getstate__(self) -> dict[str, Any]:
        """What a registry journal keeps of an actor: its name (a Ray actor handle pickles as its id)."""
        return {"name": self.name, "node": self.node}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"])  # type: ignore[misc]
        self.node = state["node"]

    async def finish(self) -> Finished:
        return await self._end

    async def report_for(self, agent_id: str) -> Finished:
        return await self._end

    def end(self, text: str = "done", status: str = "completed", reset: str = "clean", **fields: Any) -> None:
        self._end.set_result(Finished(report=FinalReport(status=status, text=text, **fields), reset=reset))

    def die(self, exc: BaseException | None = None) -> None:
        self._end.set_exception(exc or AgentUnavailable("actor 'actor' is gone: it was killed"))

    async def cancel(self, status: str = "killed", reason: str = "", agent_id: str | None = None) -> bool:
        self.cancels.append((status, reason, agent_id))
        if self._end is not None and not self._end.done():
            self.end(f"The agent {status}: {reason}", status=status, worktree=self.cancel_worktree)
        return True

    def kill(self) -> None:
        self.killed = True

    async def reset(self) -> bool:
        return True

    async def ping(self) -> str:
        if self._end is not None and self._end.done() and self._end.exception() is not None:
            raise AgentUnavailable("actor 'actor' is gone: The actor died because its worker process has died")
        return self.name


class FakePool:
    """Hands out ``FakeActor``s; ``fail`` makes the next take raise, ``gate`` holds a lane's takes."""

    def __init__(self) -> None:
        self.taken: list[FakeActor] = []
        self.given_back: list[tuple[FakeActor, bool | None]] = []
        self.fail: BaseException | None = None
        self.gates: dict[str, asyncio.Event] = {}

    async def take(self, lane: str = "home") -> FakeActor:
        if (gate := self.gates.get(lane)) is not None:
            await gate.wait()
        if self.fail is not None:
            raise self.fail
        actor = FakeActor(f"actor-{len(self.taken) + 1}")
        self.taken.append(actor)
        return actor

    async def give_back(self, actor: FakeActor, clean: bool | None = None) -> bool:
        self.given_back.append((actor, clean))
        return bool(clean)

    async def warm(self, n: int, lane: str = "home") -> int:
        return n

    def stats(self) -> dict[str, Any]:
        return {"taken": len(self.taken)}


class FakeClock:
    """Monotonic seconds that move only when the test moves them."""

    def __init__(self) -> None:
        self.now_s = 1000.0

    def __call__(self) -> float:
        return self.now_s

    def advance(self, seconds: float) -> None:
        self.now_s += seconds


def runtime(teams: bool = False, coordinator: bool = False) -> SessionRuntime:
    return SessionRuntime(session_id="s", registry=None, mailbox=None,
                          tools=ToolOptions(teams=teams, coordinator=coordinator),
                          definitions={"x": AgentDefinition(name="x", description="d")})


def spec(agent_id: str = "child", runtime: SessionRuntime | None = None, **fields: Any) -> AgentSpec:
    return AgentSpec(session_id="s", agent_id=agent_id, definition=AgentDefinition(name="t"), prompt="hi",
                     model_id="m", cwd="/tmp", tool_names=[], runtime=runtime, **fields)


def request(agent_id: str = "child", parent: str = "main", depth: int = 1, background: bool = True,
            **extra: Any) -> LaunchRequest:
    fields = dict(agent_id=agent_id, parent_agent_id=parent, depth=depth, description="d", prompt="p",
                  agent_type="general-purpose", model="m", cwd="/tmp", background=background)
    return LaunchRequest(**{**fields, **extra})


async def settle() -> None:
    """Let the watches and give-backs that are ready run to their end (some hop through a
    worker thread: a transcript read, a place check)."""
    for _ in range(3):
        for _ in range(20):
            await asyncio.sleep(0)
        await asyncio.sleep(0.01)
