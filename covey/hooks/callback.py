"""claude-agent-sdk hook callbacks: what an agent asks the root of its session for, and
the event that carries the question to the session (which asks the SDK client).

The question travels the way a permission prompt bubbles: a child asks the main
agent's actor, whose event stream the session reads; the answer comes back the same way.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from covey.events import Event


class HookCall(BaseModel):
    """Run the SDK's callback ``callback_id`` on ``input`` (a hook payload)."""

    callback_id: str
    input: dict[str, Any] = Field(default_factory=dict)
    tool_use_id: str | None = None


class HookCallbackPrompt(Event):
    """A ``HookCall`` on its way to the session (never printed: the session answers it)."""

    type: Literal["system"] = "system"
    subtype: Literal["covey_hook_callback"] = "covey_hook_callback"
    request_id: str
    callback_id: str
    input: dict[str, Any] = Field(default_factory=dict)
    tool_use_id: str | None = None


def sdk_hook_settings(hooks: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The ``initialize`` request's hooks (``{event: [{matcher, hookCallbackIds, timeout}]}``)
    in the settings files' shape, with ``callback`` handlers."""
    config: dict[str, list[dict[str, Any]]] = {}
    for event, matchers in (hooks or {}).items():
        groups = []
        for matcher in matchers or []:
            handler_extra = {"timeout": matcher["timeout"]} if matcher.get("timeout") else {}
            groups.append({
                "matcher": matcher.get("matcher") or "",
                "hooks": [{"type": "callback", "callback_id": callback_id, **handler_extra}
                          for callback_id in matcher.get("hookCallbackIds") or []],
            })
        config[event] = groups
    return config
