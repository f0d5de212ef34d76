"""A turn's result names the user messages it took in, and the host's origin of the first."""

from __future__ import annotations

from covey.events import ResultEvent
from covey.service.stamps import MAX_UUIDS, TurnStamps


def _result(**fields) -> ResultEvent:
    return ResultEvent(subtype="success", is_error=False, result="ok", num_turns=1, duration_ms=1, duration_api_ms=1,
                       total_cost_usd=0.0, usage={}, **fields)


def test_the_first_messages_origin_and_every_uuid_in_order_then_a_clean_next_turn() -> None:
    stamps = TurnStamps()
    stamps.took({"uuid": "u1", "origin": {"kind": "human"}})
    stamps.took({"uuid": "u2", "origin": {"kind": "peer", "from": "x"}})  # taken in while the turn ran
    wire = stamps.stamped(_result()).wire()
    assert (wire["origin"], wire["user_message_uuid"], wire["user_message_uuids"]) == ({"kind": "human"}, "u2", ["u1", "u2"])
    after = stamps.stamped(_result()).wire()
    assert "origin" not in after and "user_message_uuid" not in after


def test_a_notifications_origin_is_kept_and_the_list_is_capped() -> None:
    stamps = TurnStamps()
    for index in range(MAX_UUIDS + 5):
        stamps.took({"uuid": f"u{index}", "origin": {"kind": "human"}})
    notified = {"kind": "task-notification", "producer": "session-task", "runId": "r"}
    wire = stamps.stamped(_result(origin=notified)).wire()
    assert wire["origin"] == notified and len(wire["user_message_uuids"]) == MAX_UUIDS
