"""A model turn ends in exactly one explicit next step.

Every Anthropic ``stop_reason`` maps to one step; ``STOP_REASON_STEPS`` covers the
SDK's ``StopReason`` literal in full (a test checks it), so a new stop reason in
the SDK fails a test instead of falling through silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Union

from covey.model.messages import Message, TextBlock, ToolUseBlock


@dataclass(frozen=True)
class FinalOutput:
    """The model finished its turn with text for the user."""

    text: str


@dataclass(frozen=True)
class RunTools:
    """The model asked for tools; their results go back in the next request."""

    calls: tuple[ToolUseBlock, ...]


@dataclass(frozen=True)
class ContinueTurn:
    """The server paused a long turn (``pause_turn``): send the conversation back as is."""


@dataclass(frozen=True)
class CutOff:
    """The reply hit ``max_tokens``: the loop asks the model to go on (a bounded number of times)."""

    text: str
    calls: tuple[ToolUseBlock, ...] = ()
    """Tool calls in the cut reply: their input may be cut too, so they are answered, not run."""


@dataclass(frozen=True)
class Stop:
    """The run ends without a normal answer; ``reason`` says why."""

    reason: str
    text: str = ""


Step = Union[FinalOutput, RunTools, ContinueTurn, CutOff, Stop]


def text_of(message: Message) -> str:
    return "".join(block.text for block in message.content if isinstance(block, TextBlock))


def _tool_calls(message: Message) -> tuple[ToolUseBlock, ...]:
    return tuple(block for block in message.content if isinstance(block, ToolUseBlock))


def _tools_or_final(message: Message) -> Step:
    calls = _tool_calls(message)
    return RunTools(calls) if calls else FinalOutput(text_of(message))


def _stop(reason: str) -> Callable[[Message], Step]:
    return lambda message: Stop(reason, text_of(message))


STOP_REASON_STEPS: dict[Any, Callable[[Message], Step]] = {
    "end_turn": _tools_or_final,
    "stop_sequence": lambda message: FinalOutput(text_of(message)),
    "tool_use": _tools_or_final,
    "pause_turn": lambda message: ContinueTurn(),
    # A reply cut off by max_tokens is no final answer, and a tool call in it may have lost
    # part of its input: the loop asks the model to go on instead (docs/compaction.md#max-tokens).
    "max_tokens": lambda message: CutOff(text_of(message), _tool_calls(message)),
    "refusal": _stop("the model refused to continue"),
    "model_context_window_exceeded": _stop("the conversation exceeded the model's context window"),
    None: _tools_or_final,
}


def next_step(message: Message) -> Step:
    try:
        return STOP_REASON_STEPS[message.stop_reason](message)
    except KeyError:
        return Stop(f"unknown stop_reason {message.stop_reason!r}", text_of(message))


def pending_calls(messages: list[dict[str, Any]]) -> tuple[ToolUseBlock, ...]:
    """The calls of a conversation that ends on them, unanswered: a resumed session's deferred call."""
    last = messages[-1] if messages else None
    if last is None or last.get("role") != "assistant" or not isinstance(last.get("content"), list):
        return ()
    return tuple(ToolUseBlock(id=b["id"], name=b["name"], input=b.get("input") or {})
                 for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_use")


def settled(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` without the calls they end on unanswered: a prompt that comes instead passes them over."""
    if not pending_calls(messages):
        return messages
    kept = [b for b in messages[-1]["content"] if not (isinstance(b, dict) and b.get("type") == "tool_use")]
    return [*messages[:-1], *([{**messages[-1], "content": kept}] if kept else [])]
