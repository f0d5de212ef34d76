"""The texts of a compaction (docs/compaction.md): the summary request, and the message that
stands for the conversation afterwards. covey's own words, in the sections Claude Code's
summaries have, so a person or a hook used to those finds the same parts."""

from __future__ import annotations

import re

SUMMARY_REQUEST = """\
The conversation above has to be replaced by a summary so that the work can go on in a fresh \
context. Write that summary now. Answer with text only: do not call any tool, everything you \
need is above.

First think it through inside <analysis> tags: go through the conversation in order and note, \
for each part, what the user asked for, what you did about it, the decisions taken, and the \
concrete details (file paths, code snippets, function signatures, edits, commands, error \
messages and their fixes). Note every correction or preference the user gave, and every rule \
they set (files or data to keep away from, operations not to perform): those must survive \
word for word. Then check that nothing technical is missing or wrong.

Then write the summary inside <summary> tags, with these sections:

1. Primary Request and Intent: everything the user explicitly asked for and meant, in detail.
2. Key Technical Concepts: the technologies, frameworks, libraries and ideas that matter.
3. Files and Code Sections: each file read, changed or created, why it matters, and the code \
that was changed or that later work depends on (full snippets where they are short).
4. Errors and fixes: each error met, how it was fixed, and what the user said about it.
5. Problem Solving: problems solved and troubleshooting still under way.
6. All user messages: every message the user wrote (not tool results), in order.
7. Pending Tasks: what you were asked to do and have not finished.
8. Current Work: exactly what was in progress right before this request, with file names \
and code.
9. Optional Next Step: the next step, only if it follows directly from the most recent \
request; quote the latest messages to show where the work stood. Leave it out if the last \
task was done.
"""

SUMMARY_INSTRUCTIONS = "\n\nAdditional instructions for this summary:\n{instructions}"

CONTINUATION = """\
This session continues a conversation that grew too long for the context window. The summary \
below stands for its earlier part.

{summary}"""

TRANSCRIPT_NOTE = "\n\nThe whole conversation before this point is in the transcript at {path}, if a detail is needed."

RESUME_NOTE = (
    "\n\nGo on from where the conversation stopped, without asking the user anything: resume the "
    "last task directly, with no acknowledgement of this summary and no recap."
)


def summary_request(instructions: str | None) -> str:
    """The request's text, with a PreCompact hook's (or the caller's) instructions after it."""
    text = SUMMARY_REQUEST
    if instructions and instructions.strip():
        text += SUMMARY_INSTRUCTIONS.format(instructions=instructions.strip())
    return text


def summary_text(reply: str) -> str:
    """The summary in a reply: the ``<analysis>`` scratchpad dropped, the ``<summary>`` tags
    unwrapped (a reply without them is taken whole)."""
    text = re.sub(r"<analysis>.*?</analysis>", "", reply, flags=re.DOTALL)
    found = re.search(r"<summary>(.*?)(?:</summary>|$)", text, flags=re.DOTALL)
    body = found.group(1) if found else text
    return re.sub(r"\n{3,}", "\n\n", body).strip()


def continuation(summary: str, transcript: str | None, *, auto: bool) -> str:
    """The user message that stands for the compacted conversation."""
    text = CONTINUATION.format(summary=summary)
    if transcript:
        text += TRANSCRIPT_NOTE.format(path=transcript)
    return text + (RESUME_NOTE if auto else "")
