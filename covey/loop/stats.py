"""What a run has counted (requests, tokens, cost, time) and the result event that closes a turn with it."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from covey.events import ResultEvent, ResultSubtype, TerminalReason
from covey.loop.steps import text_of
from covey.model.base import TokenUsage
from covey.model.messages import Message
from covey.tools.structured_output import StructuredOutput


@dataclass
class LoopStats:
    num_turns: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    api_ms: int = 0
    started: float = field(default_factory=time.monotonic)
    results: int = 0
    """Results reported so far: each one closes a turn, as Claude Code's do."""
    turn_turns: int = 0
    turn_usage: TokenUsage = field(default_factory=TokenUsage)
    turn_started: float = field(default_factory=time.monotonic)
    """Requests, tokens and start time of the turn that is open (since the last result)."""

    def duration_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def close_turn(self) -> tuple[int, TokenUsage, int]:
        """The open turn's requests, tokens and wall time; the next turn starts now."""
        figures = (self.turn_turns, self.turn_usage, int((time.monotonic() - self.turn_started) * 1000))
        self.turn_turns, self.turn_usage, self.turn_started = 0, TokenUsage(), time.monotonic()
        self.results += 1
        return figures

    def spend(self, usage: TokenUsage, cost_usd: float) -> None:
        """A reply's tokens and cost, counted for the run and for the open turn."""
        self.usage += usage
        self.turn_usage += usage
        self.cost_usd += cost_usd


@dataclass(frozen=True)
class TurnEnding:
    """How a turn ended: the result's subtype, its text and Claude Code's terminal reason."""

    subtype: ResultSubtype
    text: str
    terminal_reason: TerminalReason
    why: str = ""
    """Put before ``text`` in ``errors`` unless ``text`` already says it."""
    api_error_status: int | None = None
    structured: Any = None
    """The input of the run's valid ``StructuredOutput`` call (``--json-schema``)."""
    error: bool | None = None
    """``is_error`` where it is not ``subtype != "success"``: an API error is ``success`` + ``is_error``."""
    deferred: dict[str, Any] | None = None
    """The call a PreToolUse hook deferred (``id``, ``name``, ``input``): the result's ``deferred_tool_use``."""


def result_event(stats: LoopStats, ending: TurnEnding, *, session_id: str, agent_id: str | None,
                 stop_reason: str | None, denials: list[dict[str, Any]]) -> ResultEvent:
    """The turn's result: its own requests, tokens and time (Claude Code's per-turn figures);
    the API time and the denials of the whole run."""
    index = stats.results
    turns, usage, duration_ms = stats.close_turn()
    text, why = ending.text, ending.why
    is_error = ending.subtype != "success" if ending.error is None else ending.error
    errors = [text if not why or why in text else f"{why}: {text}"] if is_error else []
    return ResultEvent(
        session_id=session_id, agent_id=agent_id, subtype=ending.subtype, is_error=is_error,
        result=text, num_turns=turns, duration_ms=duration_ms, duration_api_ms=stats.api_ms,
        total_cost_usd=round(stats.cost_usd, 6), usage=usage.model_dump(),
        stop_reason="tool_deferred" if ending.deferred else stop_reason if ending.terminal_reason != "api_error" else None,
        terminal_reason=ending.terminal_reason, permission_denials=list(denials), errors=errors,
        api_error_status=ending.api_error_status, result_index=index, structured_output=ending.structured,
        deferred_tool_use=ending.deferred,
    )


def tools_end(stats: LoopStats, answered: TurnEnding | None, halted: str | None, deferred: dict[str, Any] | None) -> TurnEnding | None:
    """How a turn that ran tools ends the run: on a deferred call, a structured answer or a hook's
    ``"continue": false``; None: the loop goes on."""
    if deferred is not None:  # Claude Code's: a success with no text, the call in deferred_tool_use
        return TurnEnding("success", "", "tool_deferred", deferred=deferred)
    if answered is None and halted is None:
        return None
    if answered is not None and answered.structured is not None:
        stats.turn_turns += 1  # Claude Code counts the pass that took the answer as a turn
    return answered or TurnEnding("success", halted or "", "hook_stopped")


def structured_reminder(tool: StructuredOutput | None) -> str | None:
    """With ``--json-schema``, an answer without a valid StructuredOutput call: the reminder that
    sends the model back (None once its tries are spent, or without a schema)."""
    return tool.remind() if tool is not None and tool.answer is None else None


def structured_end(tool: StructuredOutput | None, message: Message) -> TurnEnding | None:
    """With ``--json-schema``: the run's ending once StructuredOutput took a valid answer, or once
    its tries are spent; None while it goes on (and always without a schema)."""
    if tool is None:
        return None
    if tool.answer is not None:
        # The result's text is the answer's JSON, as Claude Code's (JSON.stringify: compact, unescaped).
        return TurnEnding("success", json.dumps(tool.answer, separators=(",", ":"), ensure_ascii=False), "completed",
                      structured=tool.answer)
    return TurnEnding("error_max_structured_output_retries", tool.gave_up(), "model_error") if tool.exhausted() else None
