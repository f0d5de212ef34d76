"""System prompts: the main agent's, and the environment details every agent gets."""

from __future__ import annotations

import datetime
import platform

IDENTITY = "You are covey, an agent that completes software tasks for the user in their working directory."
GENERAL_IDENTITY = "You are covey, an agent that helps the user with their tasks in their working directory."
"""The identity line of a style that drops the coding instructions (docs/definitions.md#output-styles)."""
CODING = ("Use the tools you are given to look before you act: read files before you change them, prefer "
          "editing to rewriting, and run commands to check your work.")
BRIEF = "Keep answers short and concrete; say what you did and what you found, with file paths."
DELEGATION = ("When a task splits into independent parts and the Agent tool is available, delegate parts to "
              "sub-agents and combine their reports; a background sub-agent's result arrives later as a task "
              "notification, never guess it.")
MAIN_PROMPT = " ".join((IDENTITY, CODING, BRIEF, DELEGATION))


def environment_details(cwd: str, model_id: str) -> str:
    today = datetime.date.today().isoformat()
    return (
        "<env>\n"
        f"Working directory: {cwd}\n"
        f"Platform: {platform.system().lower()}\n"
        f"Today's date: {today}\n"
        f"Model: {model_id}\n"
        "</env>"
    )


def system_blocks(prompt: str, cwd: str, model_id: str) -> list[dict[str, str]]:
    """The system prompt as text blocks: the agent's prompt, then its environment."""
    return [
        {"type": "text", "text": prompt},
        {"type": "text", "text": environment_details(cwd, model_id)},
    ]
