"""covey's exceptions, classified by who must act on them.

Every exception keeps its fields through pickling (``type(e)(*e.args)`` works),
because Ray pickles exceptions that cross an actor boundary.
"""

from __future__ import annotations

import json
from typing import Any, Literal

Limit = Literal["depth", "concurrency", "budget", "turns"]


class CoveyError(Exception):
    """Base class of every error covey raises on purpose."""


class UserError(CoveyError):
    """Bad configuration or input from a person: a settings file, a definition, a flag.

    The message names the file (or flag) and the field that is wrong.
    """


class ModelBehaviorError(CoveyError):
    """The model asked for something impossible (unknown tool, invalid input).

    It goes back to the model as an ``is_error`` tool result, never up the stack.
    """


class LimitExceeded(CoveyError):
    """A limit was reached (depth, concurrency, budget, turns); the message says what to do next."""

    def __init__(self, message: str, limit: Limit | None = None) -> None:
        super().__init__(message, limit)
        self.limit = limit
        """Which limit (None: not said)."""

    def __str__(self) -> str:
        return self.args[0]


class AgentUnavailable(CoveyError):
    """An agent's actor died or cannot be reached."""

    restarting = False
    """Ray is restarting the actor (its death was not final): a call may be made again."""


class PromptBlocked(UserError):
    """A UserPromptSubmit hook (the person's own configuration) refused the prompt; the run ends with its reason."""


class ModelAPIError(CoveyError):
    """The model API failed for good (after retries), or refused the request."""

    def __init__(self, message: str, status_code: int | None = None, payload: Any = None) -> None:
        super().__init__(message, status_code, payload)
        self.status_code = status_code
        self.payload = payload
        """The API's error body (``{"type": "error", "error": {...}}``) when it sent one."""

    def api_error_text(self) -> str:
        """What Claude Code's result says for it: ``API Error: 529 {"type":"error",...}``."""
        if self.payload is not None and self.status_code is not None:
            return f"API Error: {self.status_code} {json.dumps(self.payload, separators=(',', ':'))}"
        return f"API Error: {self.args[0]}"

    def __str__(self) -> str:
        return self.args[0]


class Interrupted(SystemExit):
    """A run stopped by a signal (SIGINT, SIGTERM). Not an error of the run, so no ``Exception``
    (no ``except Exception`` on the way swallows it): a ``SystemExit`` with the shell's code for
    the signal (130, 143), so a script that does not catch it ends as a signalled one would,
    with no traceback, and its ``finally`` blocks (a session's close) run on the way."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.code = 128 + signum


def first_line(exc: BaseException) -> str:
    """The first line of an error's message (its type's name if it has none): what a report quotes."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def error_line(exc: BaseException) -> str:
    """The one line a person reads for ``exc``: covey's own message, or for what the machine
    holds (a read-only or full disk, a folder covey may not use) what failed and where."""
    if not isinstance(exc, OSError) or isinstance(exc, CoveyError):
        return str(exc)
    if exc.strerror is None:
        return f"{type(exc).__name__}: {exc}"
    return f"{exc.strerror}: {exc.filename}" if exc.filename is not None else exc.strerror
