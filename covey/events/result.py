"""The ``result`` event that ends each turn, and token counts as Claude Code writes them."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from covey.events.base import Event
from covey.model.usage import ModelUsage


ResultSubtype = Literal["success", "error_max_turns", "error_during_execution", "error_max_structured_output_retries",
                       "error_max_budget_usd"]
TerminalReason = Literal["completed", "max_turns", "model_error", "api_error", "hook_stopped", "stop_hook_prevented",
                         "max_budget_usd", "aborted_streaming", "aborted_tools", "tool_deferred"]


class ResultEvent(Event):
    type: Literal["result"] = "result"
    subtype: ResultSubtype
    is_error: bool
    result: str
    """The final text, or why the run ended (also in ``errors``)."""
    num_turns: int
    """Model requests in this turn (since the previous result), as Claude Code counts them."""
    duration_ms: int
    """This turn's wall time."""
    duration_api_ms: int
    """Time spent waiting for the model over the whole run."""
    total_cost_usd: float
    """The main agent's result: what the whole session spent (every agent), like Claude Code's."""
    usage: dict[str, int]
    """This agent's own tokens in this turn (``TokenUsage`` fields; on the wire with Claude Code's keys, ``wire_usage``)."""
    modelUsage: dict[str, ModelUsage] = Field(default_factory=dict)
    """The main agent's result: the session's tokens and cost per model (every agent)."""
    stop_reason: str | None = None
    """The last reply's API stop reason (``end_turn``, ``tool_use``, ``max_tokens``, ...)."""
    terminal_reason: TerminalReason | None = None
    """Why the loop ended, in Claude Code's words."""
    permission_denials: list[dict[str, Any]] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    """Why a run ended in error (empty on success)."""
    api_error_status: int | None = None
    """The HTTP status of the API error that ended the run, if one did."""
    fast_mode_state: str = "off"
    fast_mode_disabled_reason: str = "unknown"
    safety_stops: int = 0
    queued_turn_count: int = 0
    result_index: int = 0
    """0 for the run's first result, 1 for the next turn's (a notification's), ..."""
    structured_output: Any = None
    """With ``--json-schema``: the final answer, the input of the valid ``StructuredOutput`` call."""
    user_message_uuid: str | None = None
    """The uuid of the (last) user message that started this turn, when the client gave one."""
    user_message_uuids: list[str] | None = None
    """Every user message this turn took in, in order (at most 64)."""
    startup_failure_reason: Literal["resume_target_not_found", "sandbox_required_unavailable"] | None = None
    """Why the session did not start, in Claude Code's words (only on such a failure)."""
    deferred_tool_use: dict[str, Any] | None = None
    """The call a PreToolUse hook deferred (``id``, ``name``, ``input``): the run ended on it, unanswered;
    resuming the session asks its hooks again and runs it (``stop_reason: "tool_deferred"``)."""
    origin: dict[str, Any] | None = None
    """What woke a turn that no prompt started: ``{"kind": "task-notification", "producer":
    "session-task", "runId": the task's run id}`` for a background agent's notification."""

    goes_on: bool = False
    """Not the run's last: background work the agent owns may still wake it for another turn.
    Print mode holds such a result until the run's last, as Claude Code does. Not on the wire."""

    nullable: ClassVar[frozenset[str]] = frozenset({"stop_reason", "api_error_status"})

    def wire(self) -> dict[str, Any]:
        data = super().wire()
        del data["goes_on"]
        data["usage"] = wire_usage(self.usage)
        if self.is_error and self.api_error_status is None:
            del data["api_error_status"]  # Claude Code's error results carry it only for an API error
        return data

    @classmethod
    def failure(cls, message: str, **fields: Any) -> "ResultEvent":
        """The result of a run that ended on an error before the loop could report one."""
        figures = {"num_turns": 0, "duration_ms": 0, "duration_api_ms": 0, "total_cost_usd": 0.0, "usage": {}}
        return cls(subtype="error_during_execution", is_error=True, result=message, errors=[message],
                   **{**figures, **fields})


def wire_usage(tokens: dict[str, int]) -> dict[str, Any]:
    """Token counts (``TokenUsage`` fields) as a result's ``usage``, with Claude Code's keys.

    covey's only server tool is web search (``web_search_requests``, the agent's own requests';
    no web fetch); it requests no fast mode or priority tier and caches with the default
    (5 minute) ephemeral breakpoints, so those parts are what they say."""
    created = tokens.get("cache_creation_input_tokens", 0)
    return {
        "input_tokens": tokens.get("input_tokens", 0),
        "cache_creation_input_tokens": created,
        "cache_read_input_tokens": tokens.get("cache_read_input_tokens", 0),
        "output_tokens": tokens.get("output_tokens", 0),
        "server_tool_use": {"web_search_requests": tokens.get("web_search_requests", 0), "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": created},
        "iterations": [],
        "speed": "standard",
        "fallback_credit": None,
    }


def token_count(usage: dict[str, Any]) -> int:
    """The tokens of a ``usage`` object (input, output and cache)."""
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return sum(int(usage.get(key) or 0) for key in keys)
