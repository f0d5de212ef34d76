"""Mail as the text a receiver's model reads on its next turn.

A teammate's words are data, not runtime frames: text that imitates a
``<task-notification>``, ``<system-reminder>`` or ``<teammate-message>`` must not
be taken for one. So every line is indented inside an attributed frame, and any
of those tags inside is escaped to ``&lt;...``. A ``TaskNotice`` is the runtime's
own frame and passes unchanged.
"""

from __future__ import annotations

import html

from covey.frames import INDENT, quoted_lines
from covey.teams.messages import Mail, ShutdownRequest, TaskNotice, TeammateMessage, UserMessage



def render_mail(mail: Mail) -> str:
    match mail:
        case TaskNotice() | UserMessage():
            return mail.text
        case TeammateMessage():
            attrs = {"from": mail.sender, "agent-id": mail.sender_id, "summary": mail.summary}
            return _frame(attrs, mail.text)
        case ShutdownRequest():
            attrs = {"from": mail.sender, "type": "shutdown_request", "request-id": mail.message_id}
            return _frame(attrs, mail.reason or "(no reason given)")
    raise TypeError(f"not a mail item: {type(mail).__name__}")


def _frame(attrs: dict[str, str | None], body: str) -> str:
    head = " ".join(f'{key}="{html.escape(value, quote=True)}"' for key, value in attrs.items() if value)
    lines = quoted_lines(body) or [INDENT]
    return "\n".join([f"<teammate-message {head}>", *lines, "</teammate-message>"])
