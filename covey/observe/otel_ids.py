"""One trace per session: the root spans of a session's runs (each turn's main agent, on any
process or node, and again when the session is resumed) share a trace id made from the session's
id, so a conversation is one trace rather than one per turn. Applies to the tracer providers covey
makes from the ``OTEL_*`` variables; a program that set its own provider keeps its own ids."""

from __future__ import annotations

import hashlib
import uuid
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

_session_trace: ContextVar[int | None] = ContextVar("covey_otel_session_trace", default=None)


def session_trace_id(session_id: str) -> int:
    """The 128-bit trace id of ``session_id``: the UUID itself, or a hash of another spelling."""
    try:
        value = uuid.UUID(session_id).int
    except ValueError:
        value = int(hashlib.sha256(session_id.encode()).hexdigest()[:32], 16)
    return value or 1  # an all-zero trace id is invalid


@contextmanager
def in_session(session_id: str) -> Iterator[None]:
    """While open, a root span started here takes ``session_id``'s trace id."""
    token = _session_trace.set(session_trace_id(session_id))
    try:
        yield
    finally:
        _session_trace.reset(token)


def session_ids() -> Any:
    """The SDK's random id generator, but a root span's trace id is its session's (``in_session``)."""
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    class SessionIds(RandomIdGenerator):
        def generate_trace_id(self) -> int:
            return _session_trace.get() or super().generate_trace_id()

    return SessionIds()
