"""Claude Code's ``session_state_changed`` lines, for an SDK that asks for them.

claude-agent-sdk starts its CLI with ``CLAUDE_CODE_SDK_READS_SESSION_STATE=1`` and keeps stdin open
after a ``result`` until the session says ``idle``: a background agent that finished just before
the result still starts a turn of its own, whose hook and permission requests need stdin. As
Claude Code's, the state is ``running`` from the first turn on and ``idle`` once no turn runs, no
message or notice waits and no background agent works; the lines carry ``sdk_host_only: true``
(the SDK keeps them from the program).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Literal, Mapping

from covey.common.flags import env_flag
from covey.events import Event
from covey.session import Session

READS_STATE_ENV = "CLAUDE_CODE_SDK_READS_SESSION_STATE"

State = Literal["running", "idle"]


class SessionStateChanged(Event):
    type: Literal["system"] = "system"
    subtype: Literal["session_state_changed"] = "session_state_changed"
    state: State
    sdk_host_only: bool = True


class SessionStates:
    """The last state told to the SDK, and the line for each change (none when it did not ask)."""

    def __init__(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self.send = send
        self.state: State | None = None

    async def running(self, session: Session) -> None:
        await self._change(session, "running")

    async def idle_unless_busy(self, session: Session) -> None:
        """``idle``, once nothing is left to run: no notice for the main agent, no background agent."""
        if self.state != "running" or not _asked(session.env):
            return
        if not await session.mail_waiting() and not await session.background_running():
            await self._change(session, "idle")

    async def _change(self, session: Session, state: State) -> None:
        if state == self.state or not _asked(session.env):
            return
        self.state = state
        await self.send(SessionStateChanged(session_id=session.session_id, state=state).wire())


def _asked(env: Mapping[str, str]) -> bool:
    return env_flag(env, (READS_STATE_ENV,))
