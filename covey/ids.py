"""Identifiers with their own types, so an agent id is never confused with any string."""

from __future__ import annotations

import itertools
import uuid

_seq = itertools.count(1)


class AgentId(str):
    """``agent-<hex>``, from a random UUID; reused when an agent is resumed."""

    @classmethod
    def new(cls) -> "AgentId":
        return cls(f"agent-{uuid.uuid4().hex[:16]}")

    def __reduce__(self):  # keep the type through pickling (Ray)
        return (AgentId, (str(self),))


def new_session_id() -> str:
    return str(uuid.uuid4())


def next_seq() -> int:
    """Increasing within this process: orders one sender's fire-and-forget updates (the
    receiver drops anything older than what it has applied; Ray may reorder tells)."""
    return next(_seq)
