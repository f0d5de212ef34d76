"""The agent tree: every agent of the session under its parent, with rolled-up usage
(``covey ps``, the notebook's live tree, a run's result)."""

from __future__ import annotations

from typing import Any, Mapping, TypedDict

from covey.model.base import TokenUsage
from covey.runtime.records import RunRecord, Status


class UsageTree(TypedDict):
    """One agent and, under ``children``, the agents it launched (a dict: it goes out as JSON)."""

    agent_id: str
    type: str
    status: Status
    description: str
    model: str
    depth: int
    background: bool
    tokens: int
    tool_uses: int
    cost_usd: float
    turns: int
    current_tools: list[str]
    rate_wait: dict[str, Any] | None
    member_name: str | None
    started_at: float
    ended_at: float | None
    subtree_tokens: int
    subtree_tool_uses: int
    subtree_cost_usd: float
    node_id: str | None
    output_file: str | None
    children: list[UsageTree]


def agent_tree(records: Mapping[str, RunRecord], agent_id: str) -> UsageTree:
    """The tree from ``agent_id`` in ``records`` (the registry's, by agent id), with each agent's
    usage and its subtree's."""
    return _tree(records[agent_id], _by_parent(records))


def subtree_usage(records: Mapping[str, RunRecord], agent_id: str) -> tuple[TokenUsage, int, float]:
    """Tokens, tool uses and cost of an agent and all its descendants (the roll-up)."""
    return _usage(records[agent_id], _by_parent(records))


def _by_parent(records: Mapping[str, RunRecord]) -> dict[str | None, list[RunRecord]]:
    children: dict[str | None, list[RunRecord]] = {}
    for record in records.values():
        children.setdefault(record.parent_agent_id, []).append(record)
    return children


def _tree(record: RunRecord, children: dict[str | None, list[RunRecord]]) -> UsageTree:
    usage, tools, cost = _usage(record, children)
    return {
        "agent_id": record.agent_id, "type": record.agent_type, "status": record.status,
        "description": record.description, "model": record.model, "depth": record.depth,
        "background": record.background, "tokens": record.usage.total, "tool_uses": record.tool_uses,
        "cost_usd": round(record.cost_usd, 6), "turns": record.turns,
        "current_tools": list(record.tools_in_flight), "rate_wait": record.rate_wait,
        "member_name": record.member_name,
        "started_at": record.started_at, "ended_at": record.ended_at, "subtree_tokens": usage.total,
        "subtree_tool_uses": tools, "subtree_cost_usd": round(cost, 6), "node_id": record.node_id,
        "output_file": record.output_file,
        "children": [_tree(child, children) for child in children.get(record.agent_id, [])],
    }


def _usage(record: RunRecord, children: dict[str | None, list[RunRecord]]) -> tuple[TokenUsage, int, float]:
    usage, tools, cost = record.usage, record.tool_uses, record.cost_usd
    for child in children.get(record.agent_id, []):
        child_usage, child_tools, child_cost = _usage(child, children)
        usage, tools, cost = usage + child_usage, tools + child_tools, cost + child_cost
    return usage, tools, cost
