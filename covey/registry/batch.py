"""How launches reach the registry: together, and without the runtime they share.

The Agent calls of one assistant message run concurrently, so their launches arrive at
the registry handle in the same turn of the event loop; they go in one call
(``launch_many``), not one each. A spec's session runtime travels with the first launch
of its key only; later launches name it by key, and a registry that does not hold the key
answers ``NeedRuntime`` and gets it whole (``covey.runtime.travel``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import AsyncIterator, Awaitable, Protocol

from covey.runtime.answers import LaunchAnswer, NeedRuntime
from covey.runtime.payloads import LaunchCall
from covey.runtime.travel import travelling


class BatchTarget(Protocol):
    """The registry, as a batch sends to it (``RegistryHandle``)."""

    async def launch_one(self, launch: LaunchCall) -> LaunchAnswer: ...
    def launch_many(self, launches: list[LaunchCall]) -> AsyncIterator[tuple[int, LaunchAnswer]]: ...


class LaunchBatch:
    def __init__(self, registry: BatchTarget) -> None:
        self.registry = registry
        self._runtime_sent: dict[str, asyncio.Future[bool]] = {}
        """Runtime keys sent to the registry: done, or on their way."""
        self._batch: list[tuple[LaunchCall, asyncio.Future[LaunchAnswer]]] = []
        """Launches made since the event loop last came round: they go in one call."""
        self._sending: set[asyncio.Task[None]] = set()

    async def launch(self, launch: LaunchCall) -> LaunchAnswer:
        """The registry's answer to ``launch``, its runtime sent once per key."""
        spec = launch.spec
        runtime = spec.runtime if spec is not None else None
        if spec is None or runtime is None:
            return await self.registry.launch_one(launch)
        if await self._registry_holds(runtime.key):
            named = dataclasses.replace(launch, spec=travelling(spec), runtime_key=runtime.key)
            answer = await self._batched(named)
            if not isinstance(answer, NeedRuntime):
                return answer
            self._runtime_sent.pop(runtime.key, None)
        sending = None
        if runtime.key not in self._runtime_sent:
            sending = self._runtime_sent[runtime.key] = asyncio.get_running_loop().create_future()
        if spec.model is not None and spec.model is runtime.model:
            spec = spec.model_copy(update={"model": None})  # it travels (sealed) in the runtime
        try:
            return await self.registry.launch_one(dataclasses.replace(launch, spec=spec))
        finally:
            if sending is not None and not sending.done():
                sending.set_result(True)  # the registry has it, whatever the answer was

    def _batched(self, launch: LaunchCall) -> Awaitable[LaunchAnswer]:
        """The answer to ``launch``, sent with the other launches made in this turn of the
        event loop."""
        loop = asyncio.get_running_loop()
        if not self._batch:
            loop.call_soon(self._send_batch)
        answer: asyncio.Future[LaunchAnswer] = loop.create_future()
        self._batch.append((launch, answer))
        return answer

    def _send_batch(self) -> None:
        batch, self._batch = self._batch, []
        task = asyncio.ensure_future(self._deliver(batch))
        self._sending.add(task)  # asyncio keeps only a weak reference
        task.add_done_callback(self._sending.discard)

    async def _deliver(self, batch: list[tuple[LaunchCall, asyncio.Future[LaunchAnswer]]]) -> None:
        waiting = [future for _, future in batch]
        try:
            if len(batch) == 1:
                _answer(waiting[0], await self.registry.launch_one(batch[0][0]))
                return
            async for index, answer in self.registry.launch_many([launch for launch, _ in batch]):
                _answer(waiting[index], answer)
        except Exception as exc:  # the registry is gone: every caller still waiting hears it
            for future in waiting:
                _fail(future, exc)

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


def _answer(waiting: asyncio.Future[LaunchAnswer], answer: LaunchAnswer) -> None:
    if not waiting.done():  # else answered already, or its caller gave up waiting
        waiting.set_result(answer)


def _fail(waiting: asyncio.Future[LaunchAnswer], exc: Exception) -> None:
    if not waiting.done():
        waiting.set_exception(exc)
