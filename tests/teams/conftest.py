"""Backends for the team tests: each fixture yields the in-memory core or a Ray-backed handle."""

from __future__ import annotations

import pytest

from covey.teams.board import TaskBoard
from covey.teams.mailbox import Mailbox
from covey.teams.mailbox_actor import MailboxHandle, mailbox_actor_class
from covey.teams.roster import TeamRoster
from covey.teams.team_actors import BoardHandle, RosterHandle, board_actor_class, roster_actor_class

IMPLS = ["memory", pytest.param("ray", marks=pytest.mark.ray)]


def _backend(request, make_core, actor_class, handle_class, *args):
    if request.param == "memory":
        yield make_core(*args)
        return
    request.getfixturevalue("ray_session")
    handle = handle_class(actor_class().remote(*args), request.node.name)
    yield handle
    handle.kill()


@pytest.fixture(params=IMPLS)
def mailbox(request):
    yield from _backend(request, Mailbox, mailbox_actor_class, MailboxHandle)


@pytest.fixture(params=IMPLS)
def roster(request):
    yield from _backend(request, TeamRoster, roster_actor_class, RosterHandle, "alpha", "agent-lead")


@pytest.fixture(params=IMPLS)
def board(request):
    yield from _backend(request, TaskBoard, board_actor_class, BoardHandle)
