"""Twelve claimers race over 60 tasks on one Ray board: every task is claimed exactly once."""

from __future__ import annotations

import asyncio
import random

import pytest

from covey.teams.tasks import Claimed
from covey.teams.team_actors import BoardHandle, board_actor_class

pytestmark = pytest.mark.ray  # the Ray-backed board, on the shared Ray

TASKS, CLAIMERS = 60, 12  # every claimer tries every task: 720 contended claims


async def _claim_everything(board: BoardHandle, me: str, ids: list[str]) -> list[str]:
    """Try every task in a private random order, then sweep with claim_next."""
    won = []
    for task_id in random.sample(ids, len(ids)):
        if isinstance(result := await board.claim(task_id, me, check_busy=False), Claimed):
            won.append(result.task.id)
    while isinstance(result := await board.claim_next(me, check_busy=False), Claimed):
        won.append(result.task.id)
    return won


async def test_concurrent_claims_never_double_claim(ray_session):
    board = BoardHandle(board_actor_class().remote(), "race board")
    try:
        ids = [(await board.create(f"task {n}", "")).id for n in range(TASKS)]
        claimers = [f"agent-{n}" for n in range(CLAIMERS)]
        won = await asyncio.gather(*(_claim_everything(board, me, ids) for me in claimers))
        every_win = [task_id for wins in won for task_id in wins]
        assert sorted(every_win, key=int) == ids  # each task once, none twice, none missed
        owners = {t.id: t.owner for t in await board.list()}
        assert all(owners[task_id] == me for me, wins in zip(claimers, won) for task_id in wins)
        assert sum(1 for wins in won if wins) > 1  # the claimers really did compete
    finally:
        board.kill()
