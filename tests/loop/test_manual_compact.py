"""``/compact``: the conversation summarised now, with the person's instructions; nothing else asked."""

from __future__ import annotations

from pathlib import Path

from covey.events import CompactBoundary, ResultEvent
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.loop.compact import CompactLimits, Compactor
from covey.loop.compacting import FAILED, NOTHING, compact_command, compact_now
from covey.model.scripted import ScriptedModel
from covey.tools.base import ToolContext

HISTORY = [{"role": "user", "content": "the word is PINEAPPLE"},
           {"role": "assistant", "content": [{"type": "text", "text": "noted"}]}]


def _loop(turns: list, *, threshold: int | None = None, before=None) -> tuple[AgentLoop, ScriptedModel]:
    model = ScriptedModel.from_turns(turns)
    compactor = Compactor(CompactLimits(window=10_000, reserve=500, threshold=threshold), before=before)
    loop = AgentLoop(model=model, config=LoopConfig(model_id="m", system=[{"type": "text", "text": "s"}]),
                     executor=ToolExecutor([], ToolContext(agent_id="main", cwd=Path("."))), compactor=compactor)
    return loop, model


async def _events(loop: AgentLoop, history: list, instructions: str) -> list:
    return [event async for event in compact_now(loop, history, instructions)]


def test_the_command_and_its_instructions_are_read() -> None:
    assert compact_command("/compact") == "" and compact_command("  /compact keep the word  ") == "keep the word"
    assert compact_command("/compacted") is None and compact_command("please /compact") is None
    assert compact_command(None) is None


async def test_compact_summarises_with_the_instructions_even_when_auto_compaction_is_off() -> None:
    loop, model = _loop([{"text": "<summary>the word is PINEAPPLE</summary>"}], threshold=None)
    boundary, result = await _events(loop, list(HISTORY), "keep the word")
    assert isinstance(boundary, CompactBoundary) and boundary.compact_metadata["trigger"] == "manual"
    assert isinstance(result, ResultEvent) and result.subtype == "success" and result.num_turns == 0
    [asked] = model.requests
    assert "keep the word" in str(asked.messages[-1]["content"])  # the person's instructions reach the summary
    assert "PINEAPPLE" in str(loop.messages) and loop.messages != HISTORY  # it goes on from the summary


async def test_nothing_to_compact_and_a_failed_summary_are_errors_that_say_so() -> None:
    loop, _ = _loop([])
    [result] = await _events(loop, [], "")
    assert result.is_error and result.result == NOTHING

    async def blocked(trigger: str) -> tuple[bool, str | None]:
        return True, None

    loop, model = _loop([], before=blocked)
    [result] = await _events(loop, list(HISTORY), "")
    assert result.is_error and result.result == FAILED and not model.requests
