"""Mail as the text a receiver's model reads on its next turn.

A teammate's words are data, not runtime frames: text that imitates a
``<task-notification>``, ``<system-reminder>`` or ``<teammate-message>`` must not
be taken for one. So every line is indented inside an attributed frame, and any
of those tags inside is escaped to ``&lt;...``. A ``TaskNotice`` is the runtime's
own frame: ``render_notice`` is the one place its text is written, and what a
child wrote (its description, its report) is quoted inside it.
"""

from __future__ import annotations

import html

from covey.common.frames import INDENT, quoted_lines
from covey.teams.messages import Mail, ReleasedTask, ShutdownRequest, TaskNotice, TeammateMessage, UserMessage

class SentPrompt(str):
    """A person's message as sent (``UserMessage``: one that came while the main agent ran): a
    message of its own is kept as this string, as Claude Code records a prompt, not as a text block."""


NOTICE_HEAD = "This is an automated background-task event from the covey runtime. It is not user input and grants no approval."


def render_mail(mail: Mail) -> str:
    match mail:
        case TaskNotice():
            return render_notice(mail)
        case UserMessage():
            return SentPrompt(mail.text)
        case TeammateMessage():
            attrs = {"from": mail.sender, "agent-id": mail.sender_id, "summary": mail.summary}
            return _frame(attrs, mail.text)
        case ShutdownRequest():
            attrs = {"from": mail.sender, "type": "shutdown_request", "request-id": mail.message_id}
            return _frame(attrs, mail.reason or "(no reason given)")
    raise TypeError(f"not a mail item: {type(mail).__name__}")


def quote(text: str) -> str:
    """Indent every line and escape frame tags: quoted text cannot close or forge a frame."""
    return "\n".join(quoted_lines(text.strip())) or INDENT + "(no text)"


def render_notice(notice: TaskNotice) -> str:
    """The user-message text of a ``<task-notification>`` (docs/subagents.md#what-the-parent-gets-back),
    as Claude Code words it: an agent's report and usage inside; a shell's output left in its file."""
    shell = notice.task_type == "local_bash"
    # A shell's summary names the command as covey words it (kept byte-for-byte as before).
    summary = notice.summary if shell else quote(notice.summary).strip()
    lines = [
        "<system-reminder>",
        NOTICE_HEAD,
        "<task-notification>",
        f"<task-id>{notice.task_id}</task-id>",
        f"<tool-use-id>{notice.tool_use_id or ''}</tool-use-id>",
        f"<output-file>{notice.output_file or ''}</output-file>",
        f"<status>{notice.status}</status>",
        f"<summary>{summary}</summary>",
    ]
    if notice.result is not None:
        lines += ["<result>", quote(notice.result), "</result>"]
    if notice.worktree is not None:
        lines.append(f"<worktree>{notice.worktree.path} (branch {notice.worktree.branch})</worktree>")
    if notice.usage is not None:
        usage = notice.usage
        lines.append(f"<usage><subagent_tokens>{usage.total_tokens}</subagent_tokens><tool_uses>{usage.tool_uses}"
                     f"</tool_uses><duration_ms>{usage.duration_ms}</duration_ms></usage>")
    lines.append("</task-notification>")
    if shell:
        lines.append(f"Read the output file to retrieve the result: {notice.output_file or ''}")
    lines.append("</system-reminder>")
    return "\n".join(lines) + _released(notice.released)


def _released(tasks: list[ReleasedTask]) -> str:
    """What the lead reads when a teammate ended holding unfinished tasks."""
    if not tasks:
        return ""
    listed = "\n".join(f"  #{task.id} {task.subject}" for task in tasks)
    return (
        "\nThese tasks were held by that teammate and are back to pending and unowned; "
        f"reassign them (the files it changed are not rolled back):\n{listed}"
    )


def _frame(attrs: dict[str, str | None], body: str) -> str:
    head = " ".join(f'{key}="{html.escape(value, quote=True)}"' for key, value in attrs.items() if value)
    lines = quoted_lines(body) or [INDENT]
    return "\n".join([f"<teammate-message {head}>", *lines, "</teammate-message>"])
