"""A compaction run by the loop: due (``auto``, as the conversation nears the window) or asked for
(``manual``: the ``/compact`` command, with the person's instructions), docs/compaction.md."""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Protocol, TypeVar

from covey.errors import ModelAPIError
from covey.events import CompactBoundary, Event, ResultEvent
from covey.loop.compact import Compactor, estimate_tokens
from covey.loop.config import LoopConfig
from covey.loop.stats import TurnEnding, LoopStats
from covey.loop.steps import text_of
from covey.loop.wire import with_breakpoint, with_breakpoints
from covey.model.base import Model, ModelRequest, TokenUsage
from covey.model.messages import Message

E = TypeVar("E", bound=Event)

COMPACT = "/compact"
"""Claude Code's command: summarise the conversation now (what follows it: instructions for the summary)."""
NOTHING = "There is no conversation to compact yet."
FAILED = "The conversation could not be compacted: the summary request failed or a PreCompact hook blocked it."


class CompactingLoop(Protocol):
    """What a compaction reads and changes of the loop that runs it (``AgentLoop``, which passes itself)."""

    model: Model
    config: LoopConfig
    stats: LoopStats
    messages: list[dict[str, Any]]
    compactor: Compactor | None
    context_tokens: int
    counted: int
    agent_id: str | None
    cost_of: Callable[[str, TokenUsage], float]

    def cache_safe_params(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]: ...
    def event(self, cls: type[E], **fields: Any) -> E: ...
    def result(self, ending: TurnEnding) -> ResultEvent: ...


def compact_command(prompt: str | None) -> str | None:
    """The instructions of a ``/compact`` prompt ("" for none), or None if it is no such command."""
    words = (prompt or "").strip()
    if words != COMPACT and not words.startswith(COMPACT + " "):
        return None
    return words[len(COMPACT):].strip()


async def compacted(loop: CompactingLoop, trigger: str, tokens: int, asked: str | None = None) -> CompactBoundary | None:
    """Summarise ``loop``'s conversation and carry on from the summary; None if a PreCompact hook
    blocked it or the summary failed (the conversation stays as it was)."""
    compactor = loop.compactor
    assert compactor is not None
    blocked, instructions = await compactor.instructions(trigger)
    if blocked:
        return None
    wanted = "\n\n".join(text for text in (asked, instructions) if text) or None
    try:
        reply: Message | None = await loop.model.create(summary_request(loop, compactor, wanted))
    except ModelAPIError:
        reply = None
    if reply is None or not text_of(reply).strip():
        compactor.failures += 1
        return None
    done = await compactor.finish(text_of(reply), pre_tokens=tokens, trigger=trigger, reply=reply)
    usage = TokenUsage.of(reply.usage)
    loop.stats.spend(usage, loop.cost_of(reply.model or loop.config.model_id, usage))
    loop.messages = done.messages
    loop.config.inherited = 0  # a fork's inherited prefix is gone with the rest
    loop.context_tokens, loop.counted = 0, 0
    return loop.event(CompactBoundary, compact_metadata={"trigger": trigger, "pre_tokens": tokens},
                       context=done.context, summary=done.summary, attachments=done.attachments,
                       usage=usage.model_dump(), model=reply.model or loop.config.model_id)


def summary_request(loop: CompactingLoop, compactor: Compactor, instructions: str | None) -> ModelRequest:
    """The summary request: this agent's system prompt, tools and conversation as its last request
    sent them (the prompt cache serves that prefix), the summary prompt appended. No thinking:
    the reserve may be below a thinking budget."""
    return ModelRequest(
        model=loop.config.model_id, system=with_breakpoint(loop.config.system),
        messages=with_breakpoints(compactor.request_messages(loop.messages, instructions)),
        tools=with_breakpoint(loop.cache_safe_params()[1]),
        max_tokens=compactor.limits.reserve, betas=loop.config.betas, agent_id=loop.agent_id,
    )


async def compact_now(loop: CompactingLoop, messages: list[dict[str, Any]], instructions: str) -> AsyncIterator[Event]:
    """``/compact``: the conversation summarised now (trigger ``manual``), its boundary, then the
    turn's result; no other request is made."""
    loop.messages.extend(messages)
    if loop.compactor is None or not loop.messages:
        yield loop.result(TurnEnding("error_during_execution", NOTHING, "completed"))
        return
    boundary = await compacted(loop, "manual", estimate_tokens(loop.messages), instructions or None)
    if boundary is None:
        yield loop.result(TurnEnding("error_during_execution", FAILED, "model_error"))
        return
    yield boundary
    yield loop.result(TurnEnding("success", "", "completed"))
