"""What a turn's ``result`` says of the messages that started it: claude-agent-sdk's
``origin`` (the first one's, as the host stamped it), ``user_message_uuid`` and
``user_message_uuids`` (each message the turn took in, in order; Claude Code lists at most 64);
and, with ``--replay-user-messages``, each message echoed back as Claude Code echoes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from covey.events import ResultEvent, new_uuid, now_iso

MAX_UUIDS = 64


@dataclass
class TurnStamps:
    uuids: list[str] = field(default_factory=list)
    origin: dict[str, Any] | None = None

    def took(self, message: Mapping[str, Any]) -> None:
        """A user message this turn starts with or takes in while it runs."""
        if isinstance(uuid := message.get("uuid"), str) and len(self.uuids) < MAX_UUIDS:
            self.uuids.append(uuid)
        if self.origin is None and isinstance(origin := message.get("origin"), dict):
            self.origin = origin

    def stamped(self, result: ResultEvent) -> ResultEvent:
        """``result`` with the turn's stamps (a notification's origin stays); the next turn starts clean."""
        update: dict[str, Any] = {}
        if self.uuids:
            update.update(user_message_uuid=self.uuids[-1], user_message_uuids=list(self.uuids))
        if result.origin is None and self.origin is not None:
            update["origin"] = self.origin
        self.uuids, self.origin = [], None
        return result.model_copy(update=update) if update else result


def replayed(message: Mapping[str, Any], session_id: str, content: str | None = None) -> dict[str, Any]:
    """A user message as ``--replay-user-messages`` echoes it on stdout (Claude Code 2.1.337's shape:
    the message as sent, or with ``content`` instead, its ``uuid`` or a new one, ``isReplay``)."""
    uuid, sent = message.get("uuid"), message.get("message")
    if content is not None:
        sent = {**(sent if isinstance(sent, dict) else {"role": "user"}), "content": content}
    return {"type": "user", "message": sent, "session_id": session_id, "parent_tool_use_id": None,
            "uuid": uuid if isinstance(uuid, str) else new_uuid(), "timestamp": now_iso(), "isReplay": True}
