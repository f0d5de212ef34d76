"""``AgentRunner`` runs one agent from its spec; ``AgentActor`` is its thin Ray shell.

The runner merges two streams into one: the agent's own events and the
permission prompts it must send up to the root (terminal or notebook callback).
A prompt is answered through ``answer`` from whoever consumes the events.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, AsyncIterator

import ray

from covey.agents.lifecycle import AgentServices, run_agent
from covey.agents.spec import AgentSpec
from covey.events import Event, PermissionPrompt
from covey.model.factory import make_model
from covey.model.pricing import PriceTable

_DONE = object()


class AgentRunner:
    """Plain core of an agent actor: one agent run at a time, fully reset between runs."""

    def __init__(self) -> None:
        self._answers: dict[str, asyncio.Future] = {}
        self._queue: asyncio.Queue | None = None

    async def run(self, spec: AgentSpec) -> AsyncIterator[Event]:
        queue: asyncio.Queue = asyncio.Queue()
        self._queue = queue
        services = self.services_for(spec)
        task = asyncio.create_task(self._pump(run_agent(spec, services), queue))
        try:
            while (item := await queue.get()) is not _DONE:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            self._fail_pending_answers()
            self._queue = None

    def services_for(self, spec: AgentSpec) -> AgentServices:
        prices = PriceTable.load(spec.settings.get("modelPrices"))
        # An agent whose root cannot show a prompt denies instead of blocking (SPEC 8).
        asker = self._ask_root if spec.settings.get("can_ask") else None
        return AgentServices(model=_model_of(spec.model), asker=asker, cost_of=prices.cost_usd)

    async def answer(self, request_id: str, answer: Any) -> bool:
        """The root's answer to a permission prompt; False if nobody waits for it."""
        future = self._answers.pop(request_id, None)
        if future is None or future.done():
            return False
        future.set_result(answer)
        return True

    async def _ask_root(self, request: Any) -> Any:
        if self._queue is None:
            return False
        request_id = uuid.uuid4().hex
        future = asyncio.get_running_loop().create_future()
        self._answers[request_id] = future
        await self._queue.put(PermissionPrompt(request_id=request_id, **_prompt_fields(request)))
        return await future

    @staticmethod
    async def _pump(events: AsyncIterator[Event], queue: asyncio.Queue) -> None:
        try:
            async for event in events:
                await queue.put(event)
        except Exception as exc:  # surfaced to the consumer, which owns the run
            await queue.put(exc)
        finally:
            await queue.put(_DONE)

    def _fail_pending_answers(self) -> None:
        for future in self._answers.values():
            if not future.done():
                future.set_result(False)
        self._answers.clear()


def _model_of(source: Any) -> Any:
    """A Model object travels as is; a spec string is built here, where the agent runs."""
    return source if hasattr(source, "create") else make_model(source)


def _prompt_fields(request: Any) -> dict[str, Any]:
    return {
        "tool_name": request.tool_name,
        "subject": request.subject,
        "input": request.input,
        "message": request.message,
        "session_id": getattr(request, "session_id", "") or "",
        "agent_id": getattr(request, "agent_id", None),
    }


class _AgentActor:
    """Ray shell: each method forwards to the runner."""

    def __init__(self) -> None:
        self.runner = AgentRunner()

    async def run(self, spec: AgentSpec) -> AsyncIterator[Event]:
        async for event in self.runner.run(spec):
            yield event

    async def answer(self, request_id: str, answer: Any) -> bool:
        return await self.runner.answer(request_id, answer)

    async def ping(self) -> str:
        return ray.get_runtime_context().get_node_id()


def agent_actor_class(**options: Any):
    """The Ray actor class; agents wait on the model, so they reserve no CPU."""
    return ray.remote(num_cpus=0, max_restarts=0, **options)(_AgentActor)
