"""Compaction through a Session (Ray, the fake Messages API): the main agent's conversation is
compacted mid-turn, stream-json carries ``system/compact_boundary``, and the next turn goes on from
the summary its transcript holds (docs/compaction.md)."""

from __future__ import annotations

import asyncio
import os

import pytest

from covey.events import CompactBoundary, ResultEvent
from covey.session import Session
from covey.transcripts.session_files import project_folder
from covey.transcripts.transcript import read_transcript, transcript_path
from tests.session.scripts import MAIN, rule
from tests.session.served import model_for, served

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors

RULES = (
    rule({**MAIN, "last_message_contains": "Primary Request and Intent"},
         {"text": "<summary>The user had big.txt read.</summary>"}),
    rule({**MAIN, "last_message_contains": "READ BIG"}, {"tool_use": {"name": "Read", "input": {"file_path": "big.txt"}}}),
    rule(MAIN, {"text": "ok"}),
)


async def test_a_turn_that_outgrows_the_window_compacts_and_the_next_turn_starts_from_the_summary(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "big.txt").write_text("".join(f"line {i}: {'x' * 50}\n" for i in range(1_900)))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "30000"}
    with served(*RULES) as api:
        session = Session(cwd=str(project), model=model_for(api), transcript_dir=str(tmp_path / "t"), pool_size=1,
                          env=env)
        try:
            first = await asyncio.wait_for(_turn(session, "READ BIG please"), 60)
            second = await asyncio.wait_for(_turn(session, "and now?"), 60)
        finally:
            session.close()
    boundaries = [e for e in first if isinstance(e, CompactBoundary)]
    assert len(boundaries) == 1 and not any(isinstance(e, CompactBoundary) for e in second)
    wire = boundaries[0].wire()
    assert wire["subtype"] == "compact_boundary" and wire["compact_metadata"]["trigger"] == "auto"
    assert wire["compact_metadata"]["pre_tokens"] >= 20_000 and wire["session_id"] == session.session_id
    assert [e.result for e in (first[-1], second[-1])] == ["ok", "ok"] and isinstance(second[-1], ResultEvent)
    last = str(api.requests[-1]["messages"])
    assert "The user had big.txt read." in last and "READ BIG please" not in last and "and now?" in last
    path = transcript_path(project_folder(tmp_path / "t", session.cwd), session.session_id, session.main_agent_id,
                           main=True)
    records = list(read_transcript(path))
    marks = [r for r in records if r.get("subtype") == "compact_boundary"]
    assert len(marks) == 1 and marks[0]["uuid"] == boundaries[0].uuid
    assert any(r.get("isCompactSummary") for r in records)


async def _turn(session: Session, prompt: str) -> list:
    return [event async for event in session.stream(prompt)]
