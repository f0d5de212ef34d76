"""Prelude messages: project instructions, a git-status snapshot, the agent list (``run_agent``'s step 4, docs/definitions.md#built-in-agent-types).

They are user-role messages placed before the task prompt, each wrapped in a
``<system-reminder>`` so the model takes them as context, not as the user's words.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from covey.common.flags import env_flag
from covey.common.frontmatter import MAX_DEFINITION_FILE_BYTES
from covey.common.safe_files import read_text
from covey.definitions.definition import AgentDefinition
from covey.settings.files import Sources, reads

INSTRUCTION_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md", "COVEY.md")
KILL_SWITCH_ENV = "COVEY_DISABLE_OMIT_CLAUDE_MD"
MAX_STATUS_CHARS = 2000
"""A huge dirty tree must not flood every agent's context; the agent can run git itself."""
RECENT_COMMITS = 5


def project_context(cwd: str | Path, *, omit: bool, env: Mapping[str, str] | None = None,
                    sources: Sources = None) -> list[dict[str, Any]]:
    """The project's instruction files and a git snapshot as one user message ([] if none).

    ``omit`` (a definition's ``omitClaudeMd``) drops both, unless the kill switch
    ``COVEY_DISABLE_OMIT_CLAUDE_MD=1`` in ``env`` (the run's environment; None: this
    process's) turns omission off for everyone. The instruction files are project files:
    ``sources`` (``--setting-sources``) without ``project`` leaves them out, as Claude Code does.
    """
    if omitted(omit, env):
        return []
    instructions = _instructions(Path(cwd)) if reads(sources, "project") else None
    blocks = [text for text in (instructions, _git_snapshot(Path(cwd))) if text]
    if not blocks:
        return []
    return [{"role": "user", "content": [{"type": "text", "text": text} for text in blocks]}]


def omitted(omit: bool, env: Mapping[str, str] | None = None) -> bool:
    """Whether a definition's ``omitClaudeMd`` applies (the kill switch in ``env``, default
    this process's environment, turns it off)."""
    return omit and not env_flag(os.environ if env is None else env, KILL_SWITCH_ENV)


def loaded_instructions(messages: Iterable[dict[str, Any]], cwd: str | Path) -> list[Path]:
    """The instruction files of ``cwd`` whose contents ``messages`` (an agent's prelude) carry."""
    text = "\n".join(block.get("text", "") for message in messages if isinstance(message.get("content"), list)
                     for block in message["content"] if isinstance(block, dict))
    return [path for path in (Path(cwd) / name for name in INSTRUCTION_FILES) if f"Contents of {path}:\n" in text]


def _instructions(cwd: Path) -> str | None:
    sections = []
    for name in INSTRUCTION_FILES:
        path = cwd / name
        try:  # bounded: a cloned repository's 200 MB CLAUDE.md is skipped, never sent whole
            text = read_text(path, MAX_DEFINITION_FILE_BYTES, what="an instructions file").strip() \
                if path.is_file() else ""
        except (OSError, ValueError):
            continue  # an unreadable file is skipped, not fatal: the agent can still work
        if text:
            sections.append(f"Contents of {path}:\n\n{text}")
    if not sections:
        return None
    return (
        "<system-reminder>\nThese are the project's instructions, written by its maintainers. "
        "Follow them where they apply to your task; they take precedence over your defaults.\n\n"
        + "\n\n".join(sections)
        + "\n</system-reminder>"
    )


def _git_snapshot(cwd: Path) -> str | None:
    """Branch, short status and recent commits; None outside git or on any git failure."""
    try:
        import git

        repo = git.Repo(cwd, search_parent_directories=True)
        branch = "(detached HEAD)" if repo.head.is_detached else repo.active_branch.name
        status = repo.git.status("--short") or "(clean)"
        # A fresh repository has no HEAD commit yet; iter_commits would raise.
        recent = repo.iter_commits(max_count=RECENT_COMMITS) if repo.head.is_valid() else []
        commits = [f"{commit.hexsha[:7]} {_text(commit.summary)}" for commit in recent]
    except Exception:  # noqa: BLE001 - a git snapshot is a nicety; no git problem may stop an agent
        return None
    if len(status) > MAX_STATUS_CHARS:
        status = status[:MAX_STATUS_CHARS] + "\n... (truncated; run `git status` for the rest)"
    return (
        "<system-reminder>\nGit status at the start of this conversation. It is a snapshot "
        "and will not update; run git yourself for the current state.\n"
        f"Current branch: {branch}\n\nStatus:\n{status}\n\n"
        f"Recent commits:\n{chr(10).join(commits) or '(none)'}\n</system-reminder>"
    )


def _text(summary: str | bytes) -> str:
    """A commit's summary as text (GitPython hands over bytes it could not decode)."""
    return summary.decode("utf-8", errors="replace") if isinstance(summary, bytes) else summary


def tools_summary(definition: AgentDefinition) -> str:
    """The tools a definition declares, in words: ``All tools except Edit, Write`` or a list."""
    if definition.tools == ["*"]:
        if definition.disallowed_tools:
            return "All tools except " + ", ".join(definition.disallowed_tools)
        return "All tools"
    allowed = [tool for tool in definition.tools if tool not in definition.disallowed_tools]
    return ", ".join(allowed) or "no tools"


def agent_list_message(definitions: Mapping[str, AgentDefinition] | Iterable[AgentDefinition]) -> dict[str, Any]:
    """The attachment listing agent types for the Agent tool's ``subagent_type``.

    It is a message rather than part of the Agent tool's description so the tool
    schema stays byte-stable (prompt cache) when definitions change.
    """
    items = definitions.values() if isinstance(definitions, Mapping) else definitions
    lines = [f"- {d.name}: {d.description or '(no description)'} (Tools: {tools_summary(d)})" for d in items]
    text = (
        "<system-reminder>\nAgent types available to the Agent tool (pass one as subagent_type):\n"
        + "\n".join(lines)
        + "\n</system-reminder>"
    )
    return {"role": "user", "content": [{"type": "text", "text": text}]}
