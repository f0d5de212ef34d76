"""One suite, two backends (STYLE 3): every rule of the mailbox, roster and task board
holds for the in-memory core and for its Ray actor behind a handle (fixtures in conftest)."""

from __future__ import annotations

import asyncio
import time

from covey.teams.messages import ShutdownRequest, TaskNotice, TeammateMessage
from covey.teams.roster import PALETTE, Member, RosterError
from covey.teams.tasks import Claimed, ClaimRefused, Deleted, Updated, UpdateError


def _msg(text: str) -> TeammateMessage:
    return TeammateMessage(sender="bob", sender_id="agent-bob", text=text)


# --- Mailbox ---------------------------------------------------------------

async def test_mailbox_drains_shutdown_first_then_all_unread_in_order(mailbox):
    first, notice, stop = _msg("one"), TaskNotice(task_id="t1", status="completed", text="done"), \
        ShutdownRequest(sender="lead")
    assert await mailbox.put("amy", first) == first.message_id
    await mailbox.put("amy", notice)
    await mailbox.put("amy", stop)
    await mailbox.put("zed", _msg("for zed"))
    assert await mailbox.pending("amy") == 3
    drained = await mailbox.drain("amy")
    assert [m.message_id for m in drained] == [stop.message_id, first.message_id, notice.message_id]
    assert await mailbox.drain("amy") == [] and await mailbox.pending("amy") == 0
    assert await mailbox.pending("zed") == 1


async def test_mailbox_wait_times_out_empty_and_wakes_on_put(mailbox):
    assert await mailbox.wait("amy", timeout_s=0.05) == []
    waiter = asyncio.create_task(mailbox.wait("amy", timeout_s=10))
    await asyncio.sleep(0.1)
    await mailbox.put("amy", _msg("hello"))
    got = await asyncio.wait_for(waiter, 10)
    assert [m.text for m in got] == ["hello"]


async def test_mailbox_stamps_arrival_and_keeps_a_read_log(mailbox):
    before = time.time()
    await mailbox.put("amy", _msg("one"))
    await mailbox.drain("amy")
    await mailbox.put("amy", _msg("two"))
    log = await mailbox.history("amy")
    assert [m.text for m in log] == ["one", "two"]
    assert all(before <= m.arrived_at <= time.time() and m.sent_at <= m.arrived_at for m in log)
    assert await mailbox.pending("amy") == 1  # looking changes nothing


async def test_mailbox_forget_drops_unread(mailbox):
    await mailbox.put("amy", _msg("x"))
    await mailbox.forget("amy")
    assert await mailbox.pending("amy") == 0 and await mailbox.drain("amy") == []


# --- Roster ----------------------------------------------------------------

async def test_roster_assigns_palette_colours_in_order_unless_given(roster):
    a = await roster.add("amy", "agent-a", agent_type="researcher")
    b = await roster.add("bob", "agent-b", agent_type="coder", backend="process", color="gold")
    c = await roster.add("cat", "agent-c", agent_type="coder")
    assert (a.color, b.color, c.color) == (PALETTE[0], "gold", PALETTE[1])
    assert b.backend == "process" and a.backend == "actor"
    assert [m.name for m in await roster.members()] == ["amy", "bob", "cat"]
    assert await roster.lead_id() == "agent-lead"


async def test_roster_refuses_duplicates_and_bad_names_without_change(roster):
    await roster.add("amy", "agent-a", agent_type="x")
    for name, agent_id, reason in [("amy", "agent-z", "duplicate_name"),
                                   ("zoe", "agent-a", "duplicate_agent_id"),
                                   ("*", "agent-s", "invalid_name"), (" ", "agent-t", "invalid_name")]:
        refused = await roster.add(name, agent_id, agent_type="x")
        assert isinstance(refused, RosterError) and refused.reason == reason
    assert [m.agent_id for m in await roster.members()] == ["agent-a"]


async def test_roster_resolves_name_first_then_agent_id(roster):
    await roster.add("amy", "bob", agent_type="x")  # an id that looks like another's name
    await roster.add("bob", "agent-b", agent_type="x")
    assert (await roster.resolve("bob")).agent_id == "agent-b"
    assert (await roster.resolve("agent-b")).name == "bob"
    assert await roster.resolve("nobody") is None


async def test_roster_remove_by_name_or_id(roster):
    await roster.add("amy", "agent-a", agent_type="x")
    await roster.add("bob", "agent-b", agent_type="x")
    assert isinstance(await roster.remove("agent-a"), Member)
    assert (await roster.remove("bob")).agent_id == "agent-b"
    assert await roster.remove("bob") is None and await roster.members() == []


# --- Task board: create, get, update ---------------------------------------

async def test_board_creates_pending_unowned_tasks_with_counting_ids(board):
    one = await board.create("Write parser", "details", active_form="Writing parser", metadata={"k": 1})
    two = await board.create("Test parser", "more")
    assert (one.id, two.id) == ("1", "2")
    assert (one.status, one.owner, one.blocks, one.blocked_by) == ("pending", None, [], [])
    assert (await board.get("1")).active_form == "Writing parser"
    assert await board.get("9") is None
    assert [t.id for t in await board.list()] == ["1", "2"]


async def test_board_update_patches_fields_and_reports_changes(board):
    await board.create("a", "b", metadata={"keep": 1, "drop": 2})
    result = await board.update("1", {"status": "in_progress", "owner": "amy", "subject": "a",
                                      "activeForm": "Doing a", "metadata": {"drop": None, "new": 3}})
    assert isinstance(result, Updated)
    assert result.changed == ["activeForm", "status", "owner", "metadata"]
    assert result.task.metadata == {"keep": 1, "new": 3}
    cleared = await board.update("1", {"owner": "", "status": "completed"})
    assert (cleared.task.owner, cleared.task.status) == (None, "completed")


async def test_board_update_refuses_bad_patches(board):
    await board.create("a", "b")
    assert (await board.update("7", {"status": "completed"})).reason == "task_not_found"
    for bad in ({"status": "done"}, {"colour": "red"}):
        refused = await board.update("1", bad)
        assert isinstance(refused, UpdateError) and refused.reason == "invalid_patch"


async def test_board_dependency_edges_are_written_on_both_ends(board):
    for n in range(3):
        await board.create(f"t{n + 1}", "")
    await board.update("1", {"addBlocks": ["2"]})
    await board.update("3", {"addBlockedBy": ["2"]})
    t1, t2, t3 = [await board.get(i) for i in "123"]
    assert (t1.blocks, t2.blocked_by, t2.blocks, t3.blocked_by) == (["2"], ["1"], ["3"], ["2"])
    assert await board.blocked("3") == ["2"] and await board.blocked(t1) == []


async def test_board_patch_and_edges_are_all_or_nothing(board):
    await board.create("a", "")
    await board.create("b", "")
    await board.update("1", {"addBlocks": ["2"]})
    for patch, reason in [({"subject": "new", "addBlocks": ["2", "99"]}, "unknown_dependency"),
                          ({"subject": "new", "addBlockedBy": ["1"]}, "self_dependency"),
                          ({"subject": "new", "addBlockedBy": ["2"]}, "cycle")]:
        refused = await board.update("1", patch)
        assert isinstance(refused, UpdateError) and refused.reason == reason
    t1 = await board.get("1")
    assert (t1.subject, t1.blocks, t1.blocked_by) == ("a", ["2"], [])


async def test_board_delete_removes_task_and_its_edges(board):
    await board.create("a", "")
    await board.create("b", "")
    await board.update("2", {"addBlockedBy": ["1"]})
    assert isinstance(await board.update("1", {"status": "deleted"}), Deleted)
    assert await board.get("1") is None and (await board.get("2")).blocked_by == []
    assert (await board.create("c", "")).id == "3"  # ids are never reused


# --- Task board: claims ----------------------------------------------------

async def test_claim_writes_owner_and_in_progress_only_on_success(board):
    await board.create("a", "")
    claimed = await board.claim("1", "amy")
    assert isinstance(claimed, Claimed) and (claimed.task.owner, claimed.task.status) == ("amy", "in_progress")
    assert isinstance(await board.claim("1", "amy"), Claimed)  # re-claiming one's own task is fine
    refused = await board.claim("1", "bob")
    assert isinstance(refused, ClaimRefused) and refused.reason == "already_claimed"
    assert (await board.get("1")).owner == "amy"


async def test_claim_refusal_reasons(board):
    for n in range(4):
        await board.create(f"t{n + 1}", "")
    await board.update("1", {"status": "completed"})
    await board.update("3", {"addBlockedBy": ["2"]})
    assert (await board.claim("9", "amy")).reason == "task_not_found"
    assert (await board.claim("1", "amy")).reason == "already_resolved"
    assert (await board.claim("3", "amy")).reason == "blocked"
    assert isinstance(await board.claim("2", "amy"), Claimed)
    assert (await board.claim("4", "amy")).reason == "agent_busy"
    assert isinstance(await board.claim("4", "amy", check_busy=False), Claimed)
    await board.update("2", {"status": "completed"})
    assert isinstance(await board.claim("3", "bob"), Claimed)  # its blocker is done now
    assert (await board.get("3")).owner == "bob"


async def test_claim_next_takes_first_pending_unowned_unblocked(board):
    for n in range(4):
        await board.create(f"t{n + 1}", "")
    await board.update("1", {"owner": "zoe"})
    await board.update("2", {"addBlockedBy": ["4"]})
    got = await board.claim_next("amy")
    assert isinstance(got, Claimed) and got.task.id == "3"
    assert (await board.claim_next("amy")).reason == "agent_busy"
    assert (await board.claim_next("bob")).task.id == "4"
    assert (await board.claim_next("cat")).reason == "no_task_available"


async def test_release_owner_returns_unfinished_tasks_to_pending(board):
    for n in range(3):
        await board.create(f"t{n + 1}", "")
    await board.claim("1", "amy")
    await board.claim("2", "amy", check_busy=False)
    await board.update("2", {"status": "completed"})
    await board.claim("3", "bob")
    released = await board.release_owner("amy")
    assert [t.id for t in released] == ["1"]
    owners = {t.id: (t.owner, t.status) for t in await board.list()}
    assert owners == {"1": (None, "pending"), "2": ("amy", "completed"), "3": ("bob", "in_progress")}
