"""What a claude-agent-sdk program gets of a run's events (``Forwarding``)."""

from __future__ import annotations

from covey.events.base import AssistantEvent, Event
from covey.events.system import TaskStarted


class Forwarding:
    """A sub-agent's messages as Claude Code forwards them to an SDK program: a sync child's
    replies keep only their ``tool_use`` blocks unless the program's ``initialize`` asked for
    ``forwardSubagentText`` (nothing left: not sent); its user messages (its prompt, its tool
    results) and a background child's messages come whole."""

    def __init__(self) -> None:
        self.background: set[str] = set()
        """The Agent calls that started background children (their ``task_started`` said so)."""

    def shown(self, event: Event, subagent_text: bool) -> Event | None:
        if isinstance(event, TaskStarted) and event.is_backgrounded and event.tool_use_id:
            self.background.add(event.tool_use_id)
        if not isinstance(event, AssistantEvent) or event.parent_tool_use_id is None:
            return event
        if subagent_text or event.parent_tool_use_id in self.background:
            return event
        content = event.message.get("content")
        blocks = [b for b in content if b.get("type") == "tool_use"] if isinstance(content, list) else []
        if not blocks:
            return None
        return event.model_copy(update={"message": {**event.message, "content": blocks}})
