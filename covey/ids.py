"""Identifiers with their own types, so an agent id is never confused with any string."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Container

_seq = itertools.count(1)


class AgentId(str):
    """``agent-<hex>``, from a random UUID; reused when an agent is resumed."""

    @classmethod
    def new(cls) -> "AgentId":
        return cls(f"agent-{uuid.uuid4().hex[:16]}")

    def __reduce__(self):  # keep the type through pickling (Ray)
        return (AgentId, (str(self),))


def shown_agent_id(agent_id: str) -> str:
    """An agent's id as Claude Code shows it (an Agent call's result, ``list_subagents``, the
    records' ``agentId``): without ``agent-``, the name its transcript ``agent-<id>.jsonl`` adds."""
    return agent_id.removeprefix("agent-")


def known_agent_id(given: str, known: Container[str]) -> str:
    """The one of the ``known`` agent ids that ``given`` names, whole or as shown (``shown_agent_id``);
    else ``given`` unchanged."""
    if given in known or f"agent-{given}" not in known:
        return given
    return f"agent-{given}"


def new_session_id() -> str:
    return str(uuid.uuid4())


def next_seq() -> int:
    """Increasing within this process: orders one sender's fire-and-forget updates (the
    receiver drops anything older than what it has applied; Ray may reorder tells)."""
    return next(_seq)
