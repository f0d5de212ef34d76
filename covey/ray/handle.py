"""The base of every handle: the one place Ray calls happen and Ray errors are translated.

A typed handle (``TypedHandle[A]``) names each call by the method of the class its actor
runs: ``self._call(self.remote.kill_agent, agent_id, status, reason)``. ``remote`` is the
Ray actor typed as that class (``A``), so the type checker holds every call to the
method's own signature and no method is named by a string. Every handle is one: the
agent's, the registry's, the shared pool's, the mailbox's and the team's.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable, Generic, Mapping, ParamSpec, TypeVar, cast

import ray
from ray.exceptions import ActorUnavailableError, RayActorError, RayTaskError

from covey.errors import AgentUnavailable, first_line

A = TypeVar("A")
P = ParamSpec("P")
R = TypeVar("R")

RayActor = Any
"""A Ray actor handle. Ray types an actor's methods only when each is declared with
``@ray.method``, so the handle itself is opaque here; ``TypedHandle.remote`` types it."""
RayActorClass = Any
"""A Ray actor class (``ray.remote(cls)``): ``.options(...).remote(...)`` makes a ``RayActor``."""


def actor_class(cls: type[Any], **options: object) -> RayActorClass:
    """``cls`` as a Ray actor class that reserves no CPU, is never restarted and sends no
    task events (several calls per agent, and nobody looks for them in the dashboard)."""
    return remote_class(cls, **{"num_cpus": 0, "max_restarts": 0, "enable_task_events": False, **options})


def remote_class(cls: type[Any], **options: object) -> RayActorClass:
    """``ray.remote(**options)(cls)``, made once per class and options in a process. Each
    ``ray.remote`` gives the class a new function id (a random one), and every process that
    then meets a handle of one of its actors loads the class anew from the GCS (unpickled, its
    methods wrapped: ~5 ms of CPU): a fan-out's twenty children each loaded the registry's and
    the mailbox's class again for every session kit. Ray's stubs do not list every option
    (``enable_task_events``): ``ray.remote`` is called untyped here, once."""
    key = (cls, tuple(sorted(options.items())))
    if (made := _CLASSES.get(key)) is None:
        remote: Any = ray.remote
        made = _CLASSES[key] = remote(**options)(cls)
    return made


_CLASSES: dict[tuple[type[Any], tuple[tuple[str, object], ...]], RayActorClass] = {}


class GenericCallRefused(PermissionError):
    """A generic call (Ray's ``__ray_call__``) to an actor that holds secrets."""


def _refused(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
    raise GenericCallRefused(f"{type(self).__name__} runs its own methods only: no __ray_call__")


def without_generic_calls(made: RayActorClass) -> RayActorClass:
    """``made`` (a Ray actor class) without Ray's ``__ray_call__``, which runs any function the
    caller sends on the actor instance (``lambda self: self.<anything>``): its actors answer their
    own methods only. Ray adds the method in the subclass it makes (``_modify_class``) and pickles
    that subclass for the workers, so it is replaced there, before the first actor is created."""
    made.__ray_metadata__.modified_class.__ray_call__ = _refused
    return made


class TypedHandle(Generic[A]):
    """Wraps a Ray actor handle whose actor runs class ``A``; every call goes through
    ``_sent``, which turns the actor's death into ``AgentUnavailable``."""

    def __init__(self, actor: RayActor, name: str = "") -> None:
        self.actor = actor
        self.name = name

    @property
    def remote(self) -> A:
        """The actor as the class it runs: ``self.remote.launch`` names that call, typed."""
        return cast(A, self.actor)

    def _sent(self, method: Callable[P, Awaitable[R]], /, *args: P.args, **kwargs: P.kwargs) -> Awaitable[R]:
        """Send the call now; await the answer for its result (or the actor's error)."""
        return self._answer(_ray_method(method).remote(*args, **kwargs))

    def _sent_as(self, options: Mapping[str, object], method: Callable[P, Awaitable[R]], /,
                 *args: P.args, **kwargs: P.kwargs) -> Awaitable[R]:
        """``_sent`` with Ray call options (a task name for the dashboard)."""
        return self._answer(_ray_method(method).options(**options).remote(*args, **kwargs))

    async def _call(self, method: Callable[P, Awaitable[R]], /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._sent(method, *args, **kwargs)

    def _tell(self, method: Callable[P, Awaitable[object]], /, *args: P.args, **kwargs: P.kwargs) -> None:
        """Fire and forget. Ray may run two tells to an async actor out of order, so an
        update that must not be overtaken carries ``seq=next_seq()`` and the receiver
        drops anything older than what it has applied.

        A message to an actor that is already gone is dropped: nobody waits for it.
        """
        try:
            _ray_method(method).remote(*args, **kwargs)
        except Exception:
            return

    async def _stream(self, method: Callable[P, AsyncIterator[R]], /, *args: P.args,
                      **kwargs: P.kwargs) -> AsyncIterator[R]:
        """A streaming generator call's items, as they come."""
        try:
            async for ref in _ray_method(method).remote(*args, **kwargs):
                yield await ref
        except RayActorError as exc:
            raise self._gone(exc) from None

    async def _answer(self, ref: Awaitable[R]) -> R:
        try:
            return await ref
        except RayActorError as exc:
            raise self._gone(exc) from None
        except RayTaskError as exc:
            # Re-raise the actor's own exception (covey's errors keep their fields through pickling).
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, BaseException) else exc) from None

    def _gone(self, exc: BaseException) -> AgentUnavailable:
        gone = AgentUnavailable(f"actor {self.name!r} is gone: {first_line(exc)}")
        gone.restarting = isinstance(exc, ActorUnavailableError)
        return gone

    async def until_gone(self) -> str:
        """Return once the actor has died, with Ray's word for why: a call that its actor
        never answers (``sentinel``) fails when the actor goes, at no cost until then."""
        ref = self.actor.sentinel.remote()
        try:
            await ref
        except RayActorError as exc:
            return first_line(exc)
        except asyncio.CancelledError:
            ray.cancel(ref)  # else each watch would leave a call waiting in the actor
            raise
        return "it stopped answering"

    def kill(self) -> None:
        try:
            ray.kill(self.actor, no_restart=True)
        except (RayActorError, ValueError):
            return

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (type(self), (self.actor, self.name))


def _ray_method(method: Callable[..., object]) -> Any:
    """``method`` as what it is at run time: a Ray actor method (``.remote``, ``.options``)."""
    return method

