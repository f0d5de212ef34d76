"""Who answers an ``Ask``: a person at the terminal, or a Python callback.

An :data:`Asker` answers ``True`` / ``False`` or a full decision (an ``Allow``
with ``add_allow_rules`` remembers the approval for the session).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import IO, Awaitable, Callable, Union

from covey.common.terminal_question import converse, terminal
from covey.permissions.decisions import Allow, Deny, PermissionRequest

Answer = Union[bool, Allow, Deny]
Asker = Callable[[PermissionRequest], Awaitable[Answer]]


class CallbackAsker:
    """Wraps a sync or async ``fn(request) -> bool | Allow | Deny`` (notebooks, the SDK)."""

    def __init__(self, fn: Callable[[PermissionRequest], Answer | Awaitable[Answer]]) -> None:
        self.fn = fn

    async def __call__(self, request: PermissionRequest) -> Answer:
        answer = self.fn(request)
        return await answer if inspect.isawaitable(answer) else answer


class TerminalAsker:
    """Asks y / n / a(lways) on the controlling terminal.

    Reading happens in a thread so other agents' event loops keep running; a lock
    keeps concurrent prompts (parallel tools, bubbled children) from interleaving.
    """

    def __init__(self, *, stdin: IO[str] | None = None, stdout: IO[str] | None = None, tty: str = "/dev/tty") -> None:
        self.stdin, self.stdout, self.tty = stdin, stdout, tty
        self._lock = asyncio.Lock()

    async def __call__(self, request: PermissionRequest) -> Answer:
        async with self._lock:
            return await asyncio.to_thread(self._prompt, request)

    def _prompt(self, request: PermissionRequest) -> Answer:
        if self.stdin is not None and self.stdout is not None:
            return self._converse(request, self.stdin, self.stdout)
        try:
            with terminal(self.tty) as (reading, writing):
                return self._converse(request, reading, writing)
        except OSError as exc:
            message = (
                f"No terminal to ask for permission to use {request.tool_name} ({exc.strerror}), so it was "
                f"denied. Do not retry; report that this step needs the allow rule {request.suggested_rule!r}."
            )
            return Deny(message=message, source="user", reason="no terminal")

    def _converse(self, request: PermissionRequest, stdin: IO[str], stdout: IO[str]) -> Answer:
        reply = converse(stdin, stdout, message=request.message, reason=request.reason,
                         suggested_rule=request.suggested_rule, agent_id=request.agent_id)
        if reply == "always":
            return Allow(source="user", reason="always allowed at the terminal", add_allow_rules=[request.suggested_rule])
        return reply == "yes"
