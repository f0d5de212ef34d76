"""A served run's ``SessionOptions``: the client's, validated, plus what the service sets itself.

``session_for`` is the one place a served Session is built. The client sends the run options
by field name (``covey/cli/flags.py`` names each flag after its field); here they are
validated by the model itself, so a new option needs nothing here, and a bad one (an unknown
name, a wrong type, one the service owns) fails the run with an error naming the field.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import ValidationError

from covey.client.leftovers import INSTANCE_VAR
from covey.client.ports import RunBody
from covey.errors import UserError
from covey.session import Session, SessionOptions
from covey.session.options import SERVICE_OWNED

SESSION_KEYS = tuple(name for name in SessionOptions.model_fields if name not in SERVICE_OWNED)
"""The options a client may send: every other field of ``SessionOptions``."""


def client_options(request: RunBody) -> SessionOptions:
    """The client's run options, validated; ``UserError`` naming each field that is wrong."""
    given = request.get("options") or {}
    if not isinstance(given, dict):
        raise UserError(f"the run's options must be a JSON object, not {type(given).__name__}")
    if owned := sorted(SERVICE_OWNED.intersection(given)):
        raise UserError(f"the covey service sets the run option(s) {', '.join(owned)} itself: a client cannot")
    try:
        return SessionOptions.model_validate(given)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
                             for error in exc.errors())
        raise UserError(f"the run's options are not valid: {problems}") from None


def session_for(request: RunBody, asker: Any = None, *, service: bool = True, **extra: Any) -> Session:
    """The Session of a served run, from the client's ``covey_run`` request: in the client's
    directory and environment (never the service's), on the service's ready session actors
    and shared warm pool (``service=True``)."""
    owned = dict(cwd=request["cwd"], asker=asker, env=_run_env(request.get("env") or {}), service=service, **extra)
    return Session(client_options(request).model_copy(update=owned))


def _run_env(client_env: dict[str, str]) -> dict[str, str]:
    """The client's environment, marked as this service's (its agents' commands carry the
    mark, so a service after this one can find them if this one dies: ``leftovers``)."""
    instance = os.environ.get(INSTANCE_VAR)
    return {**client_env, INSTANCE_VAR: instance} if instance else dict(client_env)
