"""``RuntimeInbox``: an agent's inbox, backed by the session's mailbox and registry actors.

The loop drains it between turns; after a final answer it waits here while
the agent still owns running background children (SPEC 9), parked in the
registry so the stall watchdog leaves it alone (SPEC 10, keepalive).
"""

from __future__ import annotations

from typing import Any, Callable

from covey.events import TaskNotification
from covey.teams.messages import Mail, TaskNotice

WAIT_SLICE_S = 1.0
"""How long one mailbox wait lasts before re-checking that someone may still notify."""


class RuntimeInbox:
    def __init__(self, runtime: Any, agent_id: str, emit: Callable[[Any], None] | None = None) -> None:
        self.runtime = runtime
        self.agent_id = agent_id
        self.emit = emit

    async def drain(self) -> list[str]:
        return self._texts(await self.runtime.mailbox.drain(self.agent_id))

    async def outstanding(self) -> bool:
        if await self.runtime.registry.outstanding(self.agent_id):
            return True
        return await self.runtime.mailbox.pending(self.agent_id) > 0

    async def wait(self) -> list[str]:
        self.runtime.registry.tell("set_parked", self.agent_id, True)
        try:
            while True:
                mail = await self.runtime.mailbox.wait(self.agent_id, WAIT_SLICE_S)
                if mail:
                    return self._texts(mail)
                if not await self.outstanding():
                    return []
        finally:
            self.runtime.registry.tell("set_parked", self.agent_id, False)

    def _texts(self, mail: list[Mail]) -> list[str]:
        from covey.teams.render import render_mail

        for item in mail:
            if isinstance(item, TaskNotice) and self.emit is not None:
                self.emit(TaskNotification(
                    session_id=self.runtime.session_id, agent_id=self.agent_id,
                    task_id=item.task_id, status=item.status, summary=_summary(item.text),
                ))
        return [render_mail(item) for item in mail]


def _summary(text: str) -> str:
    start, end = text.find("<summary>"), text.find("</summary>")
    return text[start + 9:end].strip() if 0 <= start < end else ""
