"""The mailbox as a Ray actor (one per session), and its handle."""

from __future__ import annotations

import asyncio

from typing import TYPE_CHECKING, Any


from covey.ray.handle import TypedHandle, actor_class
from covey.teams.mailbox import Mailbox
from covey.teams.messages import Mail


class _MailboxActor(Mailbox):
    """Ray shell: the in-memory mailbox's async methods are the actor's methods."""

    async def sentinel(self) -> None:
        """Never answers: the session learns of this actor's death by the call failing."""
        await asyncio.Event().wait()


def mailbox_actor_class(**options: Any) -> Any:
    """The Ray actor class. Typed ``Any``, not ``ActorClass[_MailboxActor]``: ray's stubs give
    its ``.remote()`` an ``ActorHandle | type`` that callers (the shared pool) cannot use as a handle."""
    return actor_class(_MailboxActor, **options)


class MailboxHandle(TypedHandle[_MailboxActor]):
    async def put(self, recipient: str, mail: Mail) -> str:
        return await self._call(self.remote.put, recipient, mail)

    async def drain(self, recipient: str) -> list[Mail]:
        return await self._call(self.remote.drain, recipient)

    async def wait(self, recipient: str, timeout_s: float | None = None) -> list[Mail]:
        return await self._call(self.remote.wait, recipient, timeout_s)

    async def pending(self, recipient: str) -> int:
        return await self._call(self.remote.pending, recipient)

    async def reset(self) -> None:
        await self._call(self.remote.reset)

    async def history(self, recipient: str) -> list[Mail]:
        return await self._call(self.remote.history, recipient)

    async def forget(self, recipient: str) -> None:
        await self._call(self.remote.forget, recipient)

    async def close(self, recipient: str, forward_to: str) -> None:
        await self._call(self.remote.close, recipient, forward_to)

    async def reopen(self, recipient: str) -> None:
        await self._call(self.remote.reopen, recipient)


if TYPE_CHECKING:
    from covey.runtime.ports import MailboxPort

    _: type[MailboxPort] = MailboxHandle  # the type checker holds the handle to the port here
