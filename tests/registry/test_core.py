"""The registry's rules as plain Python."""

from __future__ import annotations

import time

import pytest

from covey.errors import LimitExceeded, ModelBehaviorError
from covey.model.base import TokenUsage
from covey.model.usage import ModelUsage
from covey.registry.core import Registry
from covey.runtime.limits import Limits
from covey.runtime.records import FinalReport, LaunchRequest
from covey.subagents.reports import notification_text


def _registry(**limits) -> Registry:
    registry = Registry(Limits(**limits))
    registry.register_main("main", model="m", cwd="/tmp")
    return registry


def _request(agent_id="child", parent="main", depth=1, background=True, **extra) -> LaunchRequest:
    fields = dict(agent_id=agent_id, parent_agent_id=parent, depth=depth, description="d", prompt="p",
                  agent_type="general-purpose", model="m", cwd="/tmp", background=background)
    return LaunchRequest(**{**fields, **extra})


def test_a_reserved_child_is_recorded_running_with_its_owner():
    registry = _registry()
    record = registry.reserve(_request(tool_use_id="toolu_1"))
    assert record.status == "running" and record.owner_agent_id == "main" and record.tool_use_id == "toolu_1"
    assert registry.live_subagents() == 1


def test_depth_past_the_limit_is_refused_and_nothing_is_recorded():
    registry = _registry(max_depth=1)
    with pytest.raises(LimitExceeded, match="depth limit is 1"):
        registry.reserve(_request(depth=2))
    assert "child" not in registry.records


def test_concurrency_limit_tells_the_model_not_to_retry():
    registry = _registry(max_concurrent=1)
    registry.reserve(_request("a"))
    with pytest.raises(LimitExceeded, match="Do not retry"):
        registry.reserve(_request("b"))
    assert "b" not in registry.records


def test_spent_budget_tells_the_model_to_finish_with_what_it_has():
    registry = _registry(budget_usd=0.01)
    registry.progress("main", cost_usd=0.02)
    with pytest.raises(LimitExceeded, match="Finish the task with the results you already have"):
        registry.reserve(_request())


def test_checks_run_in_order_depth_before_concurrency_before_budget_before_type():
    registry = _registry(max_depth=1, max_concurrent=1, budget_usd=0.0)
    # all four would fail; the first in SPEC order must be the one reported
    with pytest.raises(LimitExceeded, match="depth"):
        registry.reserve(_request(depth=5, type_known=False))
    registry = _registry(max_concurrent=1)
    registry.reserve(_request("x"))  # one live child: the concurrency limit is reached
    registry.limits.budget_usd = 0.0
    with pytest.raises(LimitExceeded, match="concurrency"):
        registry.reserve(_request(type_known=False))
    registry = _registry(budget_usd=0.0)
    with pytest.raises(LimitExceeded, match="budget"):
        registry.reserve(_request(type_known=False))


def test_unknown_and_denied_types_are_refused_naming_the_rule_and_source():
    registry = _registry()
    with pytest.raises(ModelBehaviorError, match="'nope' not found"):
        registry.reserve(_request(agent_type="nope", type_known=False))
    with pytest.raises(ModelBehaviorError, match=r"'Agent\(Explore\)' from projectSettings:/x"):
        registry.reserve(_request(agent_type="Explore", denied_by=("Agent(Explore)", "projectSettings:/x")))


def test_cwd_with_worktree_and_bad_places_are_refused():
    registry = _registry()
    with pytest.raises(ModelBehaviorError, match="cannot be used together"):
        registry.reserve(_request(worktree_with_cwd=True))
    with pytest.raises(ModelBehaviorError, match="does not exist"):
        registry.reserve(_request(cwd_problem="cwd '/nope' does not exist"))


def test_roles_teammates_cannot_spawn_teammates_and_in_process_ones_no_background():
    registry = _registry()
    registry.reserve(_request("mate", spawns_teammate=True))
    with pytest.raises(ModelBehaviorError, match="roster is flat"):
        registry.reserve(_request("mate2", parent="mate", depth=2, spawns_teammate=True))
    registry.records["mate"].role = "in_process_teammate"
    with pytest.raises(ModelBehaviorError, match="cannot start background"):
        registry.reserve(_request("bg", parent="mate", depth=2, background=True))
    assert registry.reserve(_request("sync", parent="mate", depth=2, background=False)).live


def test_exactly_one_notification_per_completion():
    registry = _registry()
    registry.reserve(_request())
    assert registry.claim_notification("child") is None  # still running: nothing to claim
    registry.finish("child", FinalReport(status="completed", text="done"))
    assert registry.claim_notification("child") is not None
    assert registry.claim_notification("child") is None
    assert registry.claim_notification("gone") is None


def test_the_first_report_wins():
    registry = _registry()
    registry.reserve(_request())
    assert registry.finish("child", FinalReport(status="killed", text="killed on request"))
    assert registry.finish("child", FinalReport(status="completed", text="late")) is None
    assert registry.records["child"].status == "killed"


def test_sync_children_are_not_notified_unless_moved_to_the_background():
    registry = _registry()
    registry.reserve(_request("sync", background=False))
    registry.reserve(_request("moved", background=False))
    assert registry.to_background("moved")
    for agent_id in ("sync", "moved"):
        registry.finish(agent_id, FinalReport(status="completed", text="ok"))
    assert registry.claim_notification("sync") is None
    assert registry.claim_notification("moved") is not None


def test_moving_an_ended_child_to_the_background_fails_so_its_result_is_not_lost():
    registry = _registry()
    registry.reserve(_request("sync", background=False))
    registry.finish("sync", FinalReport(status="completed", text="ok"))
    assert not registry.to_background("sync")


def test_notification_goes_to_the_owner_else_the_main_agent():
    registry = _registry()
    registry.reserve(_request("parent"))
    registry.reserve(_request("grandchild", parent="parent", depth=2))
    assert registry.notify_target(registry.records["grandchild"]) == "parent"
    registry.finish("parent", FinalReport(status="completed", text="ok"))
    assert registry.notify_target(registry.records["grandchild"]) == "main"


def test_stall_watchdog_skips_agents_with_a_tool_in_flight_or_parked():
    registry = _registry(stall_ms=1000)
    for agent_id in ("silent", "busy", "parked"):
        registry.reserve(_request(agent_id))
    registry.progress("busy", tools_in_flight=["toolu_1"])
    registry.set_parked("parked", True)
    later = time.monotonic() + 5
    assert registry.stalled(later) == ["silent"]
    registry.progress("busy", tools_in_flight=[])
    assert set(registry.stalled(time.monotonic() + 5)) == {"silent", "busy"}


def test_outstanding_counts_only_live_background_children_of_that_owner():
    registry = _registry()
    registry.reserve(_request("bg"))
    registry.reserve(_request("sync", background=False))
    assert registry.outstanding("main") == ["bg#0"]  # the keys of the notices still to come
    registry.finish("bg", FinalReport(status="completed", text="ok"))
    assert registry.outstanding("main") == ["bg#0"]  # ended, but its notice is not delivered yet
    registry.claim_notification("bg")
    assert registry.outstanding("main") == ["bg#0"]  # claimed, on its way to the mailbox
    registry.delivered("bg")
    assert registry.outstanding("main") == []


def test_a_resumed_agent_owes_a_notice_under_a_new_key():
    registry = _registry()
    registry.reserve(_request("bg"))
    registry.finish("bg", FinalReport(status="completed", text="ok"))
    registry.claim_notification("bg")
    registry.delivered("bg")
    registry.reopen("bg")
    assert registry.outstanding("main") == ["bg#1"]


def test_usage_and_cost_roll_up_to_parent_and_session():
    registry = _registry()
    registry.reserve(_request("child"))
    registry.reserve(_request("grandchild", parent="child", depth=2))
    registry.progress("main", usage=TokenUsage(input_tokens=10), cost_usd=0.1, tool_uses=1)
    registry.progress("child", usage=TokenUsage(input_tokens=20), cost_usd=0.2, tool_uses=2)
    registry.progress("grandchild", usage=TokenUsage(output_tokens=5), cost_usd=0.3, tool_uses=3)
    tree = registry.tree()
    assert tree["subtree_tokens"] == 35 and tree["subtree_tool_uses"] == 6
    assert tree["subtree_cost_usd"] == pytest.approx(0.6)
    assert tree["children"][0]["subtree_tokens"] == 25
    assert registry.session_cost_usd() == pytest.approx(0.6)


def test_abandon_leaves_no_record():
    registry = _registry()
    registry.reserve(_request())
    registry.abandon("child")
    assert "child" not in registry.records and registry.live_subagents() == 0


def test_fire_and_forget_updates_applied_out_of_order_keep_the_newest():
    """Ray may run one caller's tells to an async actor out of order: an older update must not win."""
    registry = _registry()
    registry.reserve(_request("child"))
    registry.set_parked("child", False, seq=5)  # sent after the True below, arrived first
    registry.set_parked("child", True, seq=4)
    assert registry.records["child"].parked is False
    registry.progress("child", turns=3, tools_in_flight=[], seq=10)
    registry.progress("child", turns=2, tools_in_flight=["Read"], seq=9)
    assert registry.records["child"].turns == 3 and registry.records["child"].tools_in_flight == []
    registry.progress("child", turns=4, seq=11)
    assert registry.records["child"].turns == 4
    # a resumed agent runs on another actor whose numbers start afresh
    registry.finish("child", FinalReport(status="completed", text="ok"))
    registry.reopen("child")
    registry.set_parked("child", True, seq=1)
    assert registry.records["child"].parked is True


def test_the_questions_asked_per_launch_look_only_at_open_records():
    registry = _registry()
    for i in range(50):  # a long session's history: ended, notified children
        registry.reserve(_request(f"old{i}"))
        registry.finish(f"old{i}", FinalReport(status="completed", text="ok", cost_usd=0.01))
        registry.claim_notification(f"old{i}")
        registry.delivered(f"old{i}")
    registry.reserve(_request("now"))
    registry.progress("now", cost_usd=0.5)
    assert set(registry.open) == {"main", "now"}
    assert registry.live_subagents() == 1 and registry.outstanding("main") == ["now#0"]
    assert registry.session_cost_usd() == pytest.approx(0.5 + 50 * 0.01)
    registry.finish("now", FinalReport(status="completed", text="ok", cost_usd=0.7))
    assert registry.session_cost_usd() == pytest.approx(0.7 + 50 * 0.01)
    registry.reopen("now")  # resumed: its cost counts once, as a live record's
    assert registry.session_cost_usd() == pytest.approx(0.7 + 50 * 0.01)
    assert registry.owned_live_background("main")[0].agent_id == "now"


def test_an_ended_agents_child_notices_go_to_the_main_agent_unless_it_can_still_read_them():
    registry = _registry()
    for parent in ("p_running", "p_killed", "p_done", "p_leaf"):
        registry.reserve(_request(parent))
    registry.reserve(_request("b_live", parent="p_running", depth=2))
    registry.reserve(_request("b_ended", parent="p_killed", depth=2))
    registry.reserve(_request("b_read", parent="p_done", depth=2))
    registry.finish("b_ended", FinalReport(status="completed", text="ok"))  # its notice sits in p_killed's mailbox
    registry.finish("b_read", FinalReport(status="completed", text="ok"))
    registry.finish("p_running", FinalReport(status="completed", text="ok"))
    registry.finish("p_killed", FinalReport(status="killed", text="killed on request"))
    registry.finish("p_done", FinalReport(status="completed", text="ok"))
    registry.finish("p_leaf", FinalReport(status="killed", text="killed on request"))
    assert registry.notices_go_to_main("p_running")  # a child still runs: its notice comes later
    assert registry.notices_go_to_main("p_killed")  # killed before reading its child's notice
    assert not registry.notices_go_to_main("p_done")  # completed: unread mail resumes it instead
    assert not registry.notices_go_to_main("p_leaf")  # launched nothing
    assert not registry.notices_go_to_main("main")


def test_the_main_agent_waits_for_the_background_children_of_an_owner_that_ended():
    registry = _registry()
    registry.reserve(_request("p"))
    registry.reserve(_request("b", parent="p", depth=2))
    assert registry.outstanding("main") == ["p#0"]  # b's notice goes to p while p runs
    registry.finish("p", FinalReport(status="killed", text="killed on request"))
    registry.claim_notification("p")
    registry.delivered("p")
    assert registry.outstanding("main") == ["b#0"]  # p is gone: b still runs, and its notice comes to main
    registry.finish("b", FinalReport(status="completed", text="ok"))
    registry.claim_notification("b")
    registry.delivered("b")
    assert registry.outstanding("main") == [] and registry.outstanding("p") == []


def test_what_running_agents_spent_counts_against_the_budget():
    registry = _registry(budget_usd=0.05)
    registry.reserve(_request("a"))
    registry.reserve(_request("b"))
    registry.progress("a", cost_usd=0.03)
    registry.progress("b", cost_usd=0.02)  # nothing has ended: the running agents spent it
    with pytest.raises(LimitExceeded, match="budget of \\$0.05 is spent"):
        registry.reserve(_request("c"))
    assert "c" not in registry.records


def _spent(tokens: int, cost_usd: float, **extra) -> dict:
    usage = TokenUsage(input_tokens=tokens)
    return dict(usage=usage, model_usage={"m": ModelUsage.of("m", usage, cost_usd)}, cost_usd=cost_usd, **extra)


def test_a_kill_recorded_first_keeps_what_the_run_spent():
    """The registry records a kill before the agent's own report, which alone knows its last
    turns: the first report says how the run ended, the most any report said what it spent."""
    registry = _registry()
    registry.reserve(_request())
    registry.progress("child", **_spent(100, 0.01), tool_uses=1, turns=1)
    registry.finish("child", FinalReport(status="killed", text="killed on request"))
    record = registry.records["child"]
    assert record.usage.total == 100 and record.report.usage.total == 100 and record.cost_usd == 0.01
    late = FinalReport(status="killed", text="The agent killed: cancelled", tool_uses=2, turns=3, duration_ms=900,
                       **_spent(150, 0.015))
    assert registry.finish("child", late) is None
    assert (record.status, record.report.text) == ("killed", "killed on request")
    assert (record.usage.total, record.tool_uses, record.turns, record.cost_usd) == (150, 2, 3, 0.015)
    assert record.report.usage.total == 150 and record.report.duration_ms == 900
    assert record.model_usage["m"].input_tokens == 150
    assert "<subagent_tokens>150</subagent_tokens><tool_uses>2</tool_uses><duration_ms>900" in notification_text(record)
    assert registry.session_cost_usd() == pytest.approx(0.015)  # counted once
    assert registry.tree()["subtree_tokens"] == 150
    registry.finish("child", FinalReport(status="failed", text="died", **_spent(10, 0.001)))
    assert record.usage.total == 150 and registry.session_cost_usd() == pytest.approx(0.015)  # never lowered


def test_an_agent_whose_actor_died_keeps_what_it_told():
    registry = _registry()
    registry.reserve(_request())
    registry.progress("child", **_spent(100, 0.01), tool_uses=1, turns=1)
    registry.finish("child", FinalReport(status="failed", text="The agent's actor died"))
    record = registry.records["child"]
    assert (record.usage.total, record.tool_uses, record.cost_usd) == (100, 1, 0.01)
    assert record.report.usage.total == 100 and registry.session_cost_usd() == pytest.approx(0.01)


def test_session_usage_sums_every_agent_per_model():
    registry = _registry()
    registry.reserve(_request("done"))
    registry.reserve(_request("killed"))
    registry.reserve(_request("running"))
    usage = TokenUsage(input_tokens=1000, output_tokens=100)
    registry.progress("main", usage=usage, cost_usd=0.1, model_usage={"m": ModelUsage.of("m", usage, 0.1)})
    registry.finish("done", FinalReport(status="completed", text="ok", **_spent(1000, 0.1)))
    registry.finish("killed", FinalReport(status="killed", text="killed on request"))
    registry.finish("killed", FinalReport(status="killed", text="cancelled", **_spent(1000, 0.1)))
    registry.progress("running", usage=usage, cost_usd=0.1, model_usage={"other": ModelUsage.of("other", usage, 0.1)})
    cost_usd, by_model = registry.session_usage()
    assert cost_usd == pytest.approx(0.4)
    assert by_model["m"].input_tokens == 3000 and by_model["m"].output_tokens == 100
    assert by_model["m"].cost_usd == pytest.approx(0.3) and by_model["other"].output_tokens == 100


def test_a_kill_recorded_first_still_learns_the_worktree_its_cleanup_kept():
    """Stopping a run records the kill first; the agent's own report, after its cleanup,
    says which worktree it kept (an interrupted covey -p names it on stderr)."""
    registry = _registry()
    registry.reserve(_request())
    registry.finish("child", FinalReport(status="killed", text="the run was interrupted"))
    kept = {"kept": True, "path": "/wt/agent-1", "branch": "covey/agent-1"}
    registry.finish("child", FinalReport(status="killed", text="The agent killed: cancelled", worktree=kept))
    record = registry.records["child"]
    assert record.worktree == kept and record.report.worktree == kept
    assert record.report.text == "the run was interrupted"  # the first report still says how it ended
    registry.finish("child", FinalReport(status="failed", text="late", worktree={"kept": True, "path": "/other"}))
    assert record.worktree == kept  # the first report that knew it decides
