"""The mailbox as a Ray actor (one per session), and its handle."""

from __future__ import annotations

import asyncio

from typing import Any

import ray

from covey.actors.base import ActorHandle
from covey.teams.mailbox import Mailbox
from covey.teams.messages import Mail


class _MailboxActor(Mailbox):
    """Ray shell: the in-memory mailbox's async methods are the actor's methods."""

    async def sentinel(self) -> None:
        """Never answers: the session learns of this actor's death by the call failing."""
        await asyncio.Event().wait()


def mailbox_actor_class(**options: Any):
    # No Ray task events for its calls: several per agent, and nobody looks for them in the dashboard.
    return ray.remote(num_cpus=0, max_restarts=0, enable_task_events=False, **options)(_MailboxActor)


class MailboxHandle(ActorHandle):
    async def put(self, recipient: str, mail: Mail) -> str:
        return await self.call("put", recipient, mail)

    async def drain(self, recipient: str) -> list[Mail]:
        return await self.call("drain", recipient)

    async def wait(self, recipient: str, timeout_s: float | None = None) -> list[Mail]:
        return await self.call("wait", recipient, timeout_s)

    async def pending(self, recipient: str) -> int:
        return await self.call("pending", recipient)

    async def reset(self) -> None:
        await self.call("reset")

    async def history(self, recipient: str) -> list[Mail]:
        return await self.call("history", recipient)

    async def forget(self, recipient: str) -> None:
        await self.call("forget", recipient)

    async def close(self, recipient: str, forward_to: str) -> None:
        await self.call("close", recipient, forward_to)

    async def reopen(self, recipient: str) -> None:
        await self.call("reopen", recipient)
