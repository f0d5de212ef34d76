"""``Session(detach=True)``: a run that lives in the covey service, not in this process.

A ``DetachedSession`` holds only the run's options. ``submit(prompt)`` sends them to the
covey service as ``covey -p ... --detach`` does and returns the run's session id at once:
the run goes on in a session host (docs/durability.md) whatever becomes of this program.
``covey.attach(session_id)`` follows it, from this process or any other, later; so does
``attach()`` here. Nothing of the run calls back into this program: its permission prompts
wait for a reader that answers them (``covey.attach(..., on_permission=...)``, ``covey attach``).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator

from covey.client import detached
from covey.errors import UserError
from covey.ray.address import check_run_address
from covey.session.options import SERVICE_OWNED, SessionOptions

if TYPE_CHECKING:
    from covey.client.detached import Attached, OnPermission
    from covey.events import Event
    from covey.session.result import RunResult

_NOT_HERE = ("a detached session's run is not in this process: `await session.submit(prompt)` starts it on the "
             "covey service and returns its session id; `covey.attach(session_id)` follows it")


class DetachedSession:
    """``Session(detach=True, **options)``: the options of a run started on the covey service
    (``submit``), and its session id once started. ``close`` (and leaving ``with``) leaves the
    run going; ``stop`` stops it, as ``covey kill ID`` does. It has ``Session``'s calls, but
    none of its state: the run's is in the service."""

    def __init__(self, options: SessionOptions | None = None, /, *, detach: bool = True, **fields: Any) -> None:
        if options is not None and fields:
            raise UserError(f"Session takes SessionOptions or keywords, not both (got {sorted(fields)})")
        self.options = options if options is not None else SessionOptions(**fields)
        self.sent = travelling_options(self.options)
        """The options as the service takes them: ``SessionOptions`` fields as JSON."""
        self.cwd = Path(self.options.cwd).resolve()
        self.env = dict(os.environ if self.options.env is None else self.options.env)
        check_run_address(self.options.address, self.env, "address=")
        self.session_id = ""
        """The run's session id, once ``submit`` has started it."""

    async def submit(self, prompt: str) -> str:
        """Start ``prompt`` on the covey service (started if none answers), detached; its session
        id as soon as the service has opened the session. ``CoveyError`` if it cannot start."""
        if self.session_id:
            raise UserError(f"this detached session was started already (session {self.session_id}): "
                            "attach to it, or make another Session(detach=True)")
        self.session_id = await asyncio.to_thread(detached.submit, prompt, self.sent, cwd=str(self.cwd), env=self.env)
        return self.session_id

    def attach(self, *, after: str | None = None, on_permission: OnPermission | None = None) -> Attached:
        """Follow the run (``covey.attach(self.session_id, ...)``)."""
        return detached.attach(self._started(), after=after, on_permission=on_permission)

    async def stop(self, reason: str = "stopped from Python", grace_s: float = 0.0) -> list[dict[str, Any]]:
        """Stop the run and its agents, each with its cleanup, as ``covey kill ID`` does."""
        await asyncio.to_thread(detached.kill, self._started())
        return []

    def close(self, reason: str = "other") -> None:
        """Nothing of the run is in this process: it goes on."""

    def stream(self, prompt: str | None) -> AsyncIterator[Event]:
        raise UserError(_NOT_HERE)

    async def run(self, prompt: str, *, live: bool | None = None) -> RunResult:
        raise UserError(_NOT_HERE)

    async def start(self) -> Any:
        raise UserError(_NOT_HERE)

    def __enter__(self) -> DetachedSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> DetachedSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def _started(self) -> str:
        if not self.session_id:
            raise UserError("this detached session has not been started: `await session.submit(prompt)` first")
        return self.session_id


def travelling_options(options: SessionOptions) -> dict[str, Any]:
    """The options a detached run takes to the service, by field name as JSON (what ``covey -p``
    sends); ``UserError`` naming what cannot go: a field the service sets, a callback, an object."""
    given = options.model_fields_set - {"cwd", "env"}
    if owned := sorted(given & SERVICE_OWNED):
        raise UserError(f"a detached run cannot take {', '.join(owned)}: the covey service sets it, and nothing of "
                        "the run calls back into this program (its permission prompts wait for "
                        "covey.attach(session_id, on_permission=...) or `covey attach`; limits come from COVEY_* in env)")
    if options.model is not None and not isinstance(options.model, str):
        raise UserError("a detached run's model is a name (an alias, a model id, scripted:PATH), not a model object")
    try:
        return options.model_dump(mode="json", include=given, exclude_unset=True)
    except Exception as exc:  # an object pydantic cannot write as JSON
        raise UserError(f"a detached run's options travel as JSON, and one cannot: {exc}") from None
