"""What the hooks of one event decided, combined: any block wins, contexts add up."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Sequence

from covey.hooks.command import HookAnswer, PermissionDecision

log = logging.getLogger(__name__)

# The most restrictive decision of several hooks wins.
_STRICTNESS = {"allow": 0, "ask": 1, "defer": 2, "deny": 3}


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
        if answer.system_message:
            log.warning("%s hook %r: %s", event, answer.command, answer.system_message)
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
    decisions = [d for d in (a.permission_decision for a in answers) if d is not None]
    strictest = max(decisions, key=_STRICTNESS.__getitem__, default=None)
    updated: dict[str, Any] = {}
    for answer in answers:
        updated.update(answer.updated_input or {})
    reason = base.reason or _join(a.reason for a in answers if a.permission_decision == "ask")
    return PreToolOutcome(
        **{**base.__dict__, "reason": reason},
        updated_input=updated or None,
        permission_decision=strictest,
    )


def _join(parts: Any) -> str | None:
    texts = [p.strip() for p in parts if p and p.strip()]
    return "\n".join(texts) or None


@dataclass(frozen=True)
class RequestVerdict:
    """What PermissionRequest hooks decided on the person's behalf (``hookSpecificOutput.decision``)."""

    behavior: str
    """``allow`` or ``deny``."""
    updated_input: dict[str, Any] | None = None
    """For allow: the whole input to run with instead."""
    updated_permissions: list[dict[str, Any]] | None = None
    """For allow: permission updates (``addRules``, ``setMode`` ...) to apply."""
    message: str | None = None
    """For deny: what the model reads."""
    interrupt: bool = False
    """For deny: stop the agent too."""


def combine_permission_request(answers: Sequence[HookAnswer]) -> RequestVerdict | None:
    """Any deny wins; else an allow (the first); else None: the person is asked as usual.
    Exit 2 does nothing here, as in Claude Code: only the ``decision`` object decides."""
    combine("PermissionRequest", answers)
    read = [_verdict(a.request_decision) for a in answers if a.request_decision]
    verdicts = [v for v in read if v is not None]
    denied = [v for v in verdicts if v.behavior == "deny"]
    return next(iter(denied or verdicts), None)


def _verdict(decision: dict[str, Any]) -> RequestVerdict | None:
    behavior = decision.get("behavior")
    if behavior not in ("allow", "deny"):
        log.warning("PermissionRequest hook answered an unknown decision behavior %r; ignored", behavior)
        return None
    updated = decision.get("updatedInput")
    permissions = decision.get("updatedPermissions")
    return RequestVerdict(
        behavior=behavior, message=decision.get("message") if isinstance(decision.get("message"), str) else None,
        updated_input=updated if behavior == "allow" and isinstance(updated, dict) else None,
        updated_permissions=permissions if behavior == "allow" and isinstance(permissions, list) else None,
        interrupt=behavior == "deny" and decision.get("interrupt") is True,
    )
