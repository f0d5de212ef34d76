"""``AgentHandle``: the one place that makes Ray calls on an agent actor.

It turns Ray's errors into covey's (``AgentUnavailable``) so that no other
module needs to know what an ``ActorDiedError`` is.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import ray
from ray.exceptions import RayActorError, TaskCancelledError

from covey.agents.spec import AgentSpec
from covey.errors import AgentUnavailable
from covey.events import Event


class AgentHandle:
    def __init__(self, actor: Any, name: str = "") -> None:
        self.actor = actor
        self.name = name

    async def events(self, spec: AgentSpec) -> AsyncIterator[Event]:
        """Run ``spec`` on the actor and stream its events back as they happen."""
        if not isinstance(spec, AgentSpec):
            raise TypeError(f"expected an AgentSpec, got {type(spec).__name__}")
        stream = self.actor.run.remote(spec)
        try:
            async for ref in stream:
                yield await ref
        except RayActorError as exc:
            raise AgentUnavailable(f"agent actor {self.name or spec.agent_id!r} died: {exc}") from None
        finally:
            # Stopping early (cancellation, an exception above) must stop the agent too.
            ray.cancel(stream) if _is_running(stream) else None

    async def answer(self, request_id: str, answer: Any) -> bool:
        try:
            return await self.actor.answer.remote(request_id, answer)
        except RayActorError:
            return False

    async def node_id(self) -> str:
        try:
            return await self.actor.ping.remote()
        except RayActorError as exc:
            raise AgentUnavailable(f"agent actor {self.name!r} died: {exc}") from None

    def kill(self) -> None:
        try:
            ray.kill(self.actor, no_restart=True)
        except (RayActorError, ValueError):
            pass


def _is_running(stream: Any) -> bool:
    try:
        return not stream.is_finished()
    except (AttributeError, TaskCancelledError, RayActorError):
        return False
