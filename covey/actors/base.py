"""The base of every handle: the one place Ray calls happen and Ray errors are translated."""

from __future__ import annotations

import asyncio
from typing import Any

import ray
from ray.exceptions import RayActorError, RayTaskError

from covey.errors import AgentUnavailable

class ActorHandle:
    """Wraps a Ray actor handle; ``call`` awaits a method and turns actor death into ``AgentUnavailable``."""

    def __init__(self, actor: Any, name: str = "") -> None:
        self.actor = actor
        self.name = name

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return await getattr(self.actor, method).remote(*args, **kwargs)
        except RayActorError as exc:
            raise AgentUnavailable(f"actor {self.name or method!r} is gone: {_first_line(exc)}") from None
        except RayTaskError as exc:
            # Re-raise the actor's own exception (covey's errors keep their fields through pickling).
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, BaseException) else exc) from None

    def tell(self, method: str, *args: Any, **kwargs: Any) -> None:
        """Fire and forget. Ray may run two tells to an async actor out of order, so an
        update that must not be overtaken carries ``seq=next_seq()`` and the receiver
        drops anything older than what it has applied.

        A message to an actor that is already gone is dropped: nobody waits for it.
        """
        try:
            getattr(self.actor, method).remote(*args, **kwargs)
        except Exception:
            pass

    async def until_gone(self) -> str:
        """Return once the actor has died, with Ray's word for why: a call that its actor
        never answers (``sentinel``) fails when the actor goes, at no cost until then."""
        ref = self.actor.sentinel.remote()
        try:
            await ref
        except RayActorError as exc:
            return _first_line(exc)
        except asyncio.CancelledError:
            ray.cancel(ref)  # else each watch would leave a call waiting in the actor
            raise
        return "it stopped answering"

    def kill(self) -> None:
        try:
            ray.kill(self.actor, no_restart=True)
        except (RayActorError, ValueError):
            pass

    def __reduce__(self):
        return (type(self), (self.actor, self.name))


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
