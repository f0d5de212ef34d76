"""Identifiers with their own types, so an agent id is never confused with any string."""

from __future__ import annotations

import uuid


class AgentId(str):
    """``agent-<hex>``, from a random UUID; reused when an agent is resumed."""

    @classmethod
    def new(cls) -> "AgentId":
        return cls(f"agent-{uuid.uuid4().hex[:16]}")

    def __reduce__(self):  # keep the type through pickling (Ray)
        return (AgentId, (str(self),))


def new_session_id() -> str:
    return str(uuid.uuid4())
