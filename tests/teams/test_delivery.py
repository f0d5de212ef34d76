"""Who delivers a task notice, and when mail reaches or resumes an agent (covey/teams/delivery.py)."""

from __future__ import annotations

import pytest

from covey.teams.delivery import EndedRun, agent_delivers, mail_may_come, mail_may_resume, registry_delivers

BACKGROUND_CHILD = EndedRun(status="completed", background=True, has_owner=True)


def test_a_background_child_that_ended_by_itself_puts_its_own_notice():
    assert agent_delivers(BACKGROUND_CHILD)
    assert agent_delivers(EndedRun(status="failed", background=True, has_owner=True))


@pytest.mark.parametrize("why, ending", [
    ("a sync child: its report is its caller's tool result",
     EndedRun(status="completed", background=False, has_owner=True)),
    ("the main agent has no owner", EndedRun(status="completed", background=True, has_owner=False)),
    ("a teammate: the registry releases its tasks into the notice",
     EndedRun(status="completed", background=True, has_owner=True, teammate=True)),
    ("a resumed run: the registry reopened its record", EndedRun(status="completed", background=True, has_owner=True, resumed=True)),
    ("stopped from outside", EndedRun(status="killed", background=True, has_owner=True, stopped=True)),
    ("mail may resume it (messaging)", EndedRun(status="completed", background=True, has_owner=True, messaging=True)),
    ("mail may resume it (its own background children)",
     EndedRun(status="completed", background=True, has_owner=True, launched_background=True)),
])
def test_every_other_notice_is_the_registry_s(why, ending):
    assert not agent_delivers(ending), why


def test_a_failed_agent_is_not_resumed_so_it_may_deliver_even_with_messaging():
    failed = EndedRun(status="failed", background=True, has_owner=True, messaging=True, launched_background=True)
    assert not mail_may_resume(failed) and agent_delivers(failed)


@pytest.mark.parametrize("ending, resumes", [
    (EndedRun(status="completed", background=True, has_owner=True, messaging=True), True),
    (EndedRun(status="completed", background=False, has_owner=True, launched_background=True), True),
    (EndedRun(status="completed", background=True, has_owner=True), False),  # nobody could have written
    (EndedRun(status="killed", background=True, has_owner=True, messaging=True), False),  # stays ended
    (EndedRun(status="completed", background=True, has_owner=True, messaging=True, teammate=True), False),  # drained
])
def test_mail_resumes_only_a_completed_agent_someone_could_write_to(ending, resumes):
    assert mail_may_resume(ending) is resumes


def test_the_registry_sends_exactly_the_notices_the_agent_did_not():
    assert registry_delivers(None) and not registry_delivers(1.5)


@pytest.mark.parametrize("main, resumed, messaging, comes", [
    (True, False, False, True), (False, True, False, True), (False, False, True, True), (False, False, False, False),
])
def test_mail_comes_unasked_to_the_main_agent_a_resumed_one_and_anyone_with_messaging(main, resumed, messaging, comes):
    assert mail_may_come(main=main, resumed=resumed, messaging=messaging) is comes
