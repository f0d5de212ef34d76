"""``MainAgentSlot``: what of the session's main agent changes from turn to turn: its actor
(running, or held between a conversation's turns), the turns run, its model and permission mode."""

from __future__ import annotations

from typing import TYPE_CHECKING

from covey.permissions.modes import PermissionMode

if TYPE_CHECKING:
    from covey.agent.handle import AgentHandle


class MainAgentSlot:
    """The main agent over every turn of the conversation: one id, its transcript continued."""

    def __init__(self, agent_id: str, model_id: str, mode: PermissionMode) -> None:
        self.agent_id = agent_id
        self.model_id = model_id
        """The main agent's model from the next turn on (``set_model``)."""
        self.mode: PermissionMode = mode
        """The main agent's permission mode from the next turn on (``set_permission_mode``)."""
        self.turns = 0
        """Turns run; after the first (or on resume) a turn continues the conversation."""
        self.current: AgentHandle | None = None
        """The main agent's actor while a turn runs."""
        self.held: AgentHandle | None = None
        """A conversation's main actor between its turns."""
        self.holds = False
        """A conversation (stream-json input): the main actor is held between turns (``hold``)."""
        self.interrupting = False
        """The running turn was interrupted: its result says so."""
        self.verbatim = False
        """The next turn's prompt goes as written, no ``@file`` read (the SDK's ``verbatim_prompts``)."""

    @property
    def running(self) -> bool:
        """A turn runs now."""
        return self.current is not None

    def hold(self) -> None:
        """From now on the main actor is held between turns, for the next (a conversation)."""
        self.holds = True

    def as_written(self, verbatim: bool) -> None:
        """Whether the next turn's prompt goes as written (claude-agent-sdk's ``client_composed``)."""
        self.verbatim = verbatim

    def take(self) -> AgentHandle | None:
        """The actor held since the last turn, now no longer held (None: the turn takes one from the pool)."""
        main, self.held = self.held, None
        return main

    def begin(self, main: AgentHandle) -> None:
        """The turn runs on ``main``."""
        self.current = main

    def done(self, main: AgentHandle, *, reusable: bool) -> bool:
        """The turn's run is over: counted, and a conversation holds a ``reusable`` ``main`` for its
        next turn (True); else the caller gives it back."""
        self.turns += 1
        if self.holds and reusable:
            self.held = main
            return True
        return False

    def end(self) -> None:
        """The turn is over, however it ended: nothing runs, nothing is being interrupted."""
        self.current, self.interrupting = None, False

    def release(self) -> AgentHandle | None:
        """The held actor, for the caller to give back to the pool; the slot holds none."""
        return self.take()

    def interrupt(self) -> AgentHandle | None:
        """The running turn's actor, to stop, marked interrupted (its result says so); None if no turn runs."""
        if self.current is not None:
            self.interrupting = True
        return self.current
