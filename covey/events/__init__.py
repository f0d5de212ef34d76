"""Events an agent run emits, shaped like Claude Code's print-mode stream-json.

``event.wire()`` is the JSON object Claude Code 2.1.337 would print for it (the
recorded runs in ``tests/data/claude_code`` are the reference), so tools that read
Claude Code's ``--output-format stream-json`` read covey's too. Events are pydantic
models so they cross actor boundaries intact. One module per kind: the messages
(``base``), the ``system`` events (``system``), the turn's ``result`` (``result``).
"""

from covey.events.base import (
    CLAUDE_CODE_VERSION, AssistantEvent, ConversationReset, Event, RateLimitEvent, StreamEvent, ToolProgress, TranscriptMirror, UserEvent, covey_version, new_uuid, now_iso,
)
from covey.events.result import ResultEvent, ResultSubtype, TerminalReason, token_count, wire_usage
from covey.events.system import (
    BackgroundTask, BackgroundTasksChanged, CompactBoundary, HookEvent, McpServerFailed, PermissionDenied,
    PermissionPrompt, SystemInit, TaskNotification, TaskProgress, TaskStarted, TaskUpdated, TaskUsage,
)

__all__ = [
    "CLAUDE_CODE_VERSION",
    "AssistantEvent",
    "BackgroundTask",
    "BackgroundTasksChanged",
    "CompactBoundary",
    "Event",
    "McpServerFailed",
    "PermissionDenied",
    "PermissionPrompt",
    "RateLimitEvent",
    "ConversationReset",
    "TranscriptMirror",
    "ResultEvent",
    "ResultSubtype",
    "StreamEvent",
    "SystemInit",
    "HookEvent",
    "TaskNotification",
    "TaskProgress",
    "TaskStarted",
    "TaskUpdated",
    "TaskUsage",
    "TerminalReason",
    "ToolProgress",
    "UserEvent",
    "covey_version",
    "new_uuid",
    "now_iso",
    "token_count",
    "wire_usage",
]
