"""What a run returns (``RunResult``), and the failure result of a turn that could not report."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from covey.events import AssistantEvent, Event, ResultEvent, TerminalReason, UserEvent
from covey.model.usage import ModelUsage
from covey.runtime.records import FinalReport

INTERRUPTED = "[Request interrupted by user]"
"""An interrupted turn's result (Claude Code's words for it)."""


def note_calls(running: set[str], event: Event) -> None:
    """Keep ``running``, the ids of the main agent's tool calls not yet answered, up to date with
    one of its events: a reply's ``tool_use`` starts one, a ``tool_result`` ends it."""
    blocks = event.message.get("content") if isinstance(event, (AssistantEvent, UserEvent)) else None
    for block in blocks if isinstance(blocks, list) else []:
        if block.get("type") == "tool_use":
            running.add(block.get("id"))
        elif block.get("type") == "tool_result":
            running.discard(block.get("tool_use_id"))


def interrupted_reason(running: set[str]) -> TerminalReason:
    """An interrupted turn's ``terminal_reason``, as Claude Code's: ``aborted_tools`` while a tool
    call runs, else ``aborted_streaming`` (the model's reply was coming)."""
    return "aborted_tools" if running else "aborted_streaming"


class RunResult(BaseModel):
    """What a finished run returns: the final answer with usage, cost, the agent tree and every event."""

    result: str
    is_error: bool
    num_turns: int
    """The main agent's turns over the whole run (every result's, summed)."""
    total_cost_usd: float
    """What the whole session spent: the main agent and every sub-agent."""
    usage: dict[str, int]
    """The main agent's own tokens over the whole run."""
    model_usage: dict[str, ModelUsage] = Field(default_factory=dict)
    """The session's tokens and cost per model (Claude Code's ``modelUsage``)."""
    session_id: str
    agents: dict[str, Any] = Field(default_factory=dict)
    """The agent tree: each agent's type, status, tokens and cost, with its children."""
    events: list[Any] = Field(default_factory=list, repr=False)

    @classmethod
    def from_events(cls, events: list[Event], tree: dict[str, Any] | None = None) -> "RunResult":
        results = [e for e in events if isinstance(e, ResultEvent)]
        tree = tree or {}
        if not results:
            return cls(result="the run ended without a result", is_error=True, num_turns=0,
                       total_cost_usd=0.0, usage={}, session_id="", agents=tree, events=events)
        last = results[-1]
        # Each result reports its turn (a notification-driven turn after the first has its own);
        # the run is all of them. Cost and usage per model are the session's already.
        usage: dict[str, int] = {}
        for result in results:
            for key, value in result.usage.items():
                usage[key] = usage.get(key, 0) + value
        return cls(result=last.result, is_error=last.is_error, num_turns=sum(r.num_turns for r in results),
                   total_cost_usd=last.total_cost_usd, usage=usage, model_usage=last.modelUsage,
                   session_id=last.session_id, agents=tree, events=events)


def failure(report: FinalReport, session_id: str, agent_id: str) -> ResultEvent:
    """The error result of a turn whose main agent ended without one of its own."""
    return ResultEvent.failure(
        report.text, session_id=session_id, agent_id=agent_id, num_turns=report.turns or 0,
        duration_ms=report.duration_ms, total_cost_usd=report.cost_usd, usage=report.usage.model_dump(),
    )
