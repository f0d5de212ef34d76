"""A prompt's ``@path`` mentions, read into the conversation as Claude Code reads them.

Claude Code attaches each file a prompt names with ``@`` (``@/abs/file``, ``@~/file``, ``@src/x.py``
relative to the working directory) without a tool call: the model reads it as a Read call and its
result, in two system reminders before the prompt, and the transcript keeps it as an ``attachment``
record of type ``file`` after the prompt's. A token that names no readable regular file is left as
text. claude-agent-sdk's ``verbatim_prompts`` marks a message ``client_composed``: its text is sent
as written, nothing attached (``Session.verbatim_prompt``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

MAX_LINES = 2000
"""As the Read tool without a limit: the first 2,000 lines."""
MAX_BYTES = 256 * 1024
_MENTION = re.compile(r'(?:^|(?<=\s))@("[^"]+"|\S+)')
_TRAILING = ".,;:!?)]}'\""


def file_mentions(prompt: str, cwd: str) -> list[dict[str, Any]]:
    """The ``attachment`` (Claude Code's ``file`` shape) of each distinct file ``prompt`` mentions."""
    found: list[dict[str, Any]] = []
    for token in _MENTION.findall(prompt):
        path = _file(token.strip('"'), cwd)
        if path is not None and all(seen["filename"] != str(path) for seen in found):
            found.append(_attachment(path, cwd))
    return found


def mention_blocks(mentions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The text blocks the model reads for ``mentions``, before the prompt: each a Read call and its result."""
    blocks = []
    for mention in mentions:
        file = mention["content"]["file"]
        lines = file["content"].split("\n")
        numbered = "\n".join(f"{n}\t{line}" for n, line in enumerate(lines, file["startLine"]))
        call = json.dumps({"file_path": file["filePath"]}, separators=(",", ":"))
        blocks += [_reminder(f"Called the Read tool with the following input: {call}"),
                   _reminder(f"Result of calling the Read tool:\n{numbered}")]
    return blocks


def _file(token: str, cwd: str) -> Path | None:
    for candidate in (token, token.rstrip(_TRAILING)):
        path = Path(os.path.expanduser(candidate))
        path = path if path.is_absolute() else Path(cwd) / path
        try:
            if candidate and path.is_file() and os.access(path, os.R_OK):
                return path.resolve()
        except OSError:  # a name too long, a loop of links: not a mention
            return None
    return None


def _attachment(path: Path, cwd: str) -> dict[str, Any]:
    with open(path, "rb") as handle:
        text = handle.read(MAX_BYTES).decode("utf-8", errors="replace")
    lines = text.split("\n")
    shown = "\n".join(lines[:MAX_LINES])
    file = {"filePath": str(path), "content": shown, "numLines": min(len(lines), MAX_LINES), "startLine": 1,
            "totalLines": len(lines)}
    return {"type": "file", "filename": str(path), "content": {"type": "text", "file": file},
            "displayPath": os.path.relpath(path, cwd)}


def _reminder(text: str) -> dict[str, Any]:
    return {"type": "text", "text": f"<system-reminder>\n{text}\n</system-reminder>"}
