"""Quoting text inside the runtime's frames, written here once.

What a child reports or a teammate writes is data, not a runtime frame: text
that imitates a ``<task-notification>``, ``<system-reminder>``,
``<teammate-message>`` or one of their parts must not be taken for one. So every
quoted line is indented inside its frame, and those tags inside it are escaped
to ``&lt;...``.
"""

from __future__ import annotations

import re

INDENT = "  "
FRAME_TAGS = (
    "task-notification", "system-reminder", "subagent-report", "teammate-message",
    "result", "usage", "status", "summary", "task-id",
)
_FRAME_TAG = re.compile(r"<(\s*/?\s*)(" + "|".join(FRAME_TAGS) + r")\b", re.IGNORECASE)


def escape_frames(text: str) -> str:
    """``text`` with every frame tag (opening or closing, any case or spacing) escaped."""
    return _FRAME_TAG.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)


def quoted_lines(text: str) -> list[str]:
    """``text`` escaped and indented, one entry per line (none for empty text)."""
    return [INDENT + line for line in escape_frames(text).splitlines()]
