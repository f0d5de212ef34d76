"""The launch checks and the agent tree read only what they are given: plain records and
figures, not the ``Registry`` (so the rules can be read, and tested, without the books)."""

from __future__ import annotations

from dataclasses import dataclass, field

from covey.model.base import TokenUsage
from covey.registry.checks import budget_spent, refusal
from covey.registry.tree import agent_tree, subtree_usage
from covey.runtime.limits import Limits
from covey.runtime.records import LaunchRequest, RunRecord


@dataclass
class _Books:
    """Only what ``LaunchBooks`` names."""

    limits: Limits = field(default_factory=Limits)
    records: dict[str, RunRecord] = field(default_factory=dict)
    live: int = 0
    cost_usd: float = 0.0

    def live_subagents(self) -> int:
        return self.live

    def session_cost_usd(self) -> float:
        return self.cost_usd


def _record(agent_id: str, parent: str | None, tokens: int = 0, cost_usd: float = 0.0, role: str = "subagent") -> RunRecord:
    return RunRecord(agent_id=agent_id, owner_agent_id=parent, parent_agent_id=parent, depth=0 if parent is None else 1,
                     description=agent_id, prompt="p", model="m", agent_type="t", cwd="/tmp", role=role,
                     usage=TokenUsage(input_tokens=tokens), cost_usd=cost_usd)


def _request(**extra) -> LaunchRequest:
    fields = dict(agent_id="child", parent_agent_id="main", depth=1, description="d", prompt="p",
                  agent_type="general-purpose", model="m", cwd="/tmp", background=True)
    return LaunchRequest(**{**fields, **extra})


def test_the_checks_refuse_from_the_figures_they_are_given_in_order():
    books = _Books(limits=Limits(max_concurrent=2, budget_usd=1.0), live=2, cost_usd=1.5)
    refused = refusal(books, _request())
    assert refused is not None and refused.kind == "concurrency"  # before the budget, as documented
    books.live = 0
    refused = refusal(books, _request())
    assert refused is not None and refused.kind == "budget"
    assert budget_spent(books) == "the session budget of $1.00 is spent ($1.5000 used)"
    books.cost_usd = 0.0
    assert refusal(books, _request()) is None


def test_the_role_check_reads_the_parent_in_the_records_given():
    books = _Books(records={"mate": _record("mate", "main", role="teammate")})
    refused = refusal(books, _request(parent_agent_id="mate", spawns_teammate=True, member_name="x", team_name="t"))
    assert refused is not None and refused.kind == "role"


def test_the_tree_rolls_up_usage_from_plain_records():
    records = {r.agent_id: r for r in (_record("main", None, 10, 0.1, role="main"), _record("a", "main", 5, 0.2),
                                       _record("b", "a", 1, 0.3), _record("c", "main", 2, 0.4))}
    tree = agent_tree(records, "main")
    assert [child["agent_id"] for child in tree["children"]] == ["a", "c"]
    assert tree["subtree_tokens"] == 18 and tree["children"][0]["subtree_tokens"] == 6
    assert tree["children"][0]["children"][0]["agent_id"] == "b"
    usage, _, cost = subtree_usage(records, "a")
    assert usage.total == 6 and round(cost, 6) == 0.5
