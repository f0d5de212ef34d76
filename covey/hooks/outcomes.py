"""What the hooks of one event decided, combined: any block wins, contexts add up."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Sequence

from covey.hooks.command import HookAnswer, PermissionDecision

log = logging.getLogger(__name__)

# The most restrictive decision of several hooks wins.
_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True)
class HookOutcome:
    """The verdict of every hook that ran for one event."""

    blocked: bool = False
    """PreToolUse: the call must not run. PostToolUse: feedback for the model.
    Stop: the agent must keep going. UserPromptSubmit: the prompt is refused."""
    reason: str | None = None
    stop: bool = False
    """A hook answered ``"continue": false``: the agent should stop."""
    stop_reason: str | None = None
    additional_context: str | None = None
    """Text for the model's context (``additionalContext``, or plain stdout where Claude Code uses it)."""


@dataclass(frozen=True)
class PreToolOutcome(HookOutcome):
    updated_input: dict[str, Any] | None = None
    """Fields the hooks changed, merged in hook order, to lay over the call's input."""
    permission_decision: PermissionDecision | None = None


def combine(event: str, answers: Sequence[HookAnswer], *, text_is_context: bool = False) -> HookOutcome:
    for answer in answers:
        if answer.error:
            log.warning("%s hook %r failed (non-blocking): %s", event, answer.command, answer.error)
    contexts = [a.additional_context or (a.text if text_is_context else None) for a in answers]
    return HookOutcome(
        blocked=any(a.blocked for a in answers),
        reason=_join(a.reason for a in answers if a.blocked),
        stop=any(a.stop for a in answers),
        stop_reason=_join(a.stop_reason for a in answers if a.stop),
        additional_context=_join(contexts),
    )


def combine_pre_tool(answers: Sequence[HookAnswer]) -> PreToolOutcome:
    base = combine("PreToolUse", answers)
    decisions = [a.permission_decision for a in answers if a.permission_decision]
    updated: dict[str, Any] = {}
    for answer in answers:
        updated.update(answer.updated_input or {})
    reason = base.reason or _join(a.reason for a in answers if a.permission_decision == "ask")
    return PreToolOutcome(
        **{**base.__dict__, "reason": reason},
        updated_input=updated or None,
        permission_decision=max(decisions, key=_STRICTNESS.__getitem__) if decisions else None,
    )


def _join(parts: Any) -> str | None:
    texts = [p.strip() for p in parts if p and p.strip()]
    return "\n".join(texts) or None
