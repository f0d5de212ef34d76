"""Running one ``prompt`` hook: the prompt, with the event's payload as JSON, goes to a small fast
model (Haiku unless the hook names another) through the session's model, which answers
``{"ok": true}`` or ``{"ok": false, "reason": "..."}``.

``ok: false`` is a block whose reason the agent reads. On ``Stop`` / ``SubagentStop`` the agent
goes back to work with it; on every other event it also ends the run after that step, as
``"continue": false`` does (Claude Code's rule), except where Claude Code ignores
``continue: false`` (TaskCreated, TaskCompleted from TaskUpdate). On ``PermissionRequest`` it is a
deny. An answer that is not that JSON, a model error or a timeout is a non-blocking error.
An ``agent`` hook's verifier (``covey.hooks.verifier``) answers the same way, read by :func:`read_verdict`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, ValidationError

from covey.common.bounded import cut_text
from covey.hooks.command import HOOK_OUTPUT_LIMIT_CHARS, HookAnswer
from covey.hooks.config import AgentHook, PromptHook
from covey.model.aliases import resolve_model
from covey.model.base import Model, ModelRequest
from covey.model.messages import TextBlock

PROMPT_MAX_TOKENS = 1024
"""Room for the answer: one small JSON object."""

SYSTEM = (
    "You judge a hook condition for a coding agent. Read the condition and the event's data, then answer "
    'with exactly one JSON object and nothing else: {"ok": true} when the condition is met, or '
    '{"ok": false, "reason": "<what is not met>"} when it is not.'
)

_KEEP_GOING = frozenset({"Stop", "SubagentStop"})
"""Where ``ok: false`` sends the agent back to work instead of ending its run."""


class _Verdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    ok: bool
    reason: str | None = None


def prompt_text(hook: PromptHook | AgentHook, payload: dict[str, Any]) -> str:
    """The hook's prompt with ``$ARGUMENTS`` replaced by the payload's JSON, or the JSON appended."""
    arguments = json.dumps(payload, default=str)
    if "$ARGUMENTS" in hook.prompt:
        return hook.prompt.replace("$ARGUMENTS", arguments)
    return f"{hook.prompt}\n\n{arguments}"


async def run_prompt(
    hook: PromptHook, payload: dict[str, Any], model: Model | None, *, env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
) -> HookAnswer:
    """Ask ``model`` (the session's) and read its verdict; ``env`` resolves model aliases."""
    if model is None:
        return HookAnswer(hook.command, error="no model to ask: this agent runs without the session's model")
    request = ModelRequest(
        model=resolve_model(hook.model or "haiku", env=env), max_tokens=PROMPT_MAX_TOKENS,
        system=[{"type": "text", "text": SYSTEM}], agent_id=payload.get("agent_id"),
        messages=[{"role": "user", "content": prompt_text(hook, payload)}],
    )
    limit = timeout_s or hook.timeout_for(str(payload.get("hook_event_name", "")))
    try:
        reply = await asyncio.wait_for(model.create(request), limit)
    except asyncio.TimeoutError:
        return HookAnswer(hook.command, error=f"the model gave no answer within {limit:g}s")
    except Exception as exc:  # the model API failed: a hook's failure never fails the agent
        return HookAnswer(hook.command, error=f"the model could not answer: {exc}")
    text = "".join(block.text for block in reply.content if isinstance(block, TextBlock))
    return read_verdict(hook.command, str(payload.get("hook_event_name", "")), text)


def read_verdict(command: str, event: str, text: str, *, kind: str = "prompt") -> HookAnswer:
    """The model's answer as a hook's: ``ok: true`` decides nothing, ``ok: false`` blocks (see above).
    ``kind``: the hook's type, as the default reason names it."""
    try:
        verdict = _Verdict.model_validate(json.loads(_unfenced(text)))
    except (json.JSONDecodeError, ValidationError):
        return HookAnswer(command, error=cut_text(f"the model did not answer {{\"ok\": ...}} JSON: {text.strip()!r}",
                                                  HOOK_OUTPUT_LIMIT_CHARS, what="hook output"))
    if verdict.ok:
        return HookAnswer(command)
    reason = cut_text((verdict.reason or "").strip() or f"The {kind} hook's condition was not met.",
                      HOOK_OUTPUT_LIMIT_CHARS, what="hook output")
    if event == "PermissionRequest":
        return HookAnswer(command, request_decision={"behavior": "deny", "message": reason})
    stop = event not in _KEEP_GOING
    return HookAnswer(command, blocked=True, reason=reason, stop=stop, stop_reason=reason if stop else None)


def _unfenced(text: str) -> str:
    """The JSON inside a ```json fence, as small models sometimes wrap it."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped.strip()
