"""``async`` hooks: run in the background while the agent goes on.

What such a hook says when it ends (``additionalContext``, ``systemMessage``,
or an ``asyncRewake`` hook's exit-2 stderr) is kept and reaches the model with
its next request, as Claude Code delivers it on the next turn. It can no longer
decide anything: the action it was about has already gone ahead.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable

from covey.hooks.command import HookAnswer

log = logging.getLogger(__name__)

GRACE_S = 5.0
"""How long an ending agent waits for its background hooks before stopping them."""


class Background:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self._said: list[str] = []

    def start(self, event: str, hook: Any, run: Awaitable[HookAnswer]) -> None:
        task = asyncio.ensure_future(self._finish(event, hook, run))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _finish(self, event: str, hook: Any, run: Awaitable[HookAnswer]) -> None:
        answer = await run
        if answer.error:
            log.warning("background %s hook %r failed: %s", event, answer.command, answer.error)
        said = [answer.additional_context, answer.system_message]
        if answer.blocked and getattr(hook, "async_rewake", False):
            said.append(answer.reason)
        for text in filter(None, said):
            self._said.append(f"{event} hook additional context: {text.strip()}")

    def take(self) -> str | None:
        """What finished background hooks said since the last call, for the model's next request."""
        said, self._said = self._said, []
        return "\n".join(said) or None

    @property
    def running(self) -> int:
        return len(self._tasks)

    async def settle(self, grace_s: float = GRACE_S) -> None:
        """Let running hooks finish for up to ``grace_s``, then stop the rest (their process
        groups are killed)."""
        if not self._tasks:
            return
        done, pending = await asyncio.wait(set(self._tasks), timeout=grace_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
