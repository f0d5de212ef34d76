"""Where a session's files are: where Claude Code keeps its own (docs/resume.md#where-sessions-live).

``<config>/projects/<project>/<session>.jsonl`` is the main agent's transcript and
``<config>/projects/<project>/<session>/subagents/agent-<id>.jsonl`` a sub-agent's, so
claude-agent-sdk's ``list_sessions``, ``get_session_messages`` and ``list_subagents`` read
covey's sessions. ``<config>`` is ``CLAUDE_CONFIG_DIR`` or ``~/.claude`` (a session's
``transcript_dir`` replaces it); ``<project>`` is the real path of the session's directory
with every character but ASCII letters and digits made ``-``, as Claude Code names it.
covey's own record of the session, ``session.json``, is in ``<project>/<session>/``.
Sessions an older covey wrote are in ``~/.covey/transcripts/<session>/`` (``LEGACY_DIR``).
"""

from __future__ import annotations

import json
import logging
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from covey.common.private_dirs import open_private, private_dir
from covey.errors import UserError

log = logging.getLogger("covey.definitions")

CONFIG_DIR = Path("~/.claude")
LEGACY_DIR = Path("~/.covey/transcripts")
"""Where covey kept sessions before it kept them where Claude Code does: ``<session>/<agent-id>.jsonl``."""
MAX_NAME = 200
"""Claude Code's longest project folder name before it cuts the name and adds a hash."""


@dataclass(frozen=True)
class SessionRoots:
    """Where sessions are: ``root`` (``<root>/projects/…``, new sessions) and ``legacy`` (an older
    covey's ``<legacy>/<session>/``, read and moved on first resume)."""

    root: Path
    legacy: Path

    @classmethod
    def of(cls, transcript_dir: str | os.PathLike | SessionRoots | None = None, *,
           env: Mapping[str, str] | None = None, home: Path | None = None) -> SessionRoots:
        """A given ``transcript_dir`` is both (an older covey wrote ``<transcript_dir>/<session>/``);
        else the run's ``CLAUDE_CONFIG_DIR`` or ``<home>/.claude``, and ``<home>/.covey/transcripts``
        (``home`` None: ``~``, left for each node to expand)."""
        if isinstance(transcript_dir, SessionRoots):
            return transcript_dir
        if transcript_dir:
            return cls(Path(transcript_dir), Path(transcript_dir))
        base = home if home is not None else Path("~")
        config = (env if env is not None else os.environ).get("CLAUDE_CONFIG_DIR")
        return cls(Path(config) if config else base / CONFIG_DIR.relative_to("~"), base / LEGACY_DIR.relative_to("~"))

    def absolute(self) -> SessionRoots:
        # Absolute: a record's paths must not depend on the directory covey was started in.
        return SessionRoots(self.root.expanduser().absolute(), self.legacy.expanduser().absolute())


def project_name(cwd: str | os.PathLike) -> str:
    """Claude Code's folder name for a project: its real path, each character that is not an
    ASCII letter or digit a ``-``; a longer name than 200 is cut and a hash of the path added."""
    path = unicodedata.normalize("NFC", os.path.realpath(cwd))
    name = re.sub(r"[^a-zA-Z0-9]", "-", path)
    return name if len(name) <= MAX_NAME else f"{name[:MAX_NAME]}-{_simple_hash(path)}"


def _simple_hash(text: str) -> str:
    """JavaScript's 32-bit string hash in base 36, as Claude Code (and the SDK's reader) compute it."""
    value = 0
    for char in text:
        value = (value * 31 + ord(char)) & 0xFFFFFFFF
    value = abs(value - (1 << 32) if value >= 1 << 31 else value)
    digits = ""
    while True:
        value, digit = divmod(value, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
        if not value:
            return digits


def project_folder(root: str | os.PathLike, cwd: str | os.PathLike) -> Path:
    """Where the sessions of the project at ``cwd`` are: ``<root>/projects/<project name>``."""
    return Path(root) / "projects" / project_name(cwd)


def transcript_path(folder: str | os.PathLike | None, session_id: str, agent_id: str, *, main: bool) -> Path:
    """An agent's transcript in a project folder: the main agent's ``<session>.jsonl``, a
    sub-agent's ``<session>/subagents/agent-<id>.jsonl`` (covey's ids already start ``agent-``).
    ``folder`` None: this directory's project folder in the user's config dir."""
    base = Path(folder).expanduser() if folder else project_folder(SessionRoots.of().root.expanduser(), os.getcwd())
    if main:
        return base / f"{session_id}.jsonl"
    name = agent_id if agent_id.startswith("agent-") else f"agent-{agent_id}"
    return base / session_id / "subagents" / f"{name}.jsonl"


def agent_transcript(spec: Any) -> Path:
    """The transcript of the agent an ``AgentSpec`` describes (depth 0: the session's main agent)."""
    folder = spec.transcript_dir or project_folder(SessionRoots.of().root.expanduser(), spec.cwd)
    return transcript_path(folder, spec.session_id, spec.agent_id, main=spec.depth == 0)


def sdk_agent_id(agent_id: str) -> str:
    """A sub-agent's id as claude-agent-sdk's ``list_subagents`` reads it from the file name."""
    return agent_id.removeprefix("agent-")


def agent_meta(spec: Any) -> dict[str, Any]:
    """Claude Code's metadata of the sub-agent an ``AgentSpec`` describes: its type, the Agent call
    (and, nested, the sub-agent) that launched it, which the SDK's ``get_subagent_messages``
    reports as each message's ``parent_tool_use_id`` / ``parent_agent_id``, how deep it runs,
    whether it runs in the background and on which model."""
    definition = spec.definition
    meta = {"agentType": definition.name, "isBuiltIn": definition.source == "built-in",
            "description": spec.description or None, "toolUseId": spec.tool_use_id, "spawnDepth": spec.depth,
            "parentAgentId": sdk_agent_id(spec.parent_agent_id) if spec.depth > 1 and spec.parent_agent_id else None,
            "requestShape": "background" if spec.background else "foreground", "model": spec.model_id}
    return {key: value for key, value in meta.items() if value is not None}


def write_agent_meta(transcript: Path, meta: dict[str, Any]) -> None:
    """``agent-<id>.meta.json`` beside a sub-agent's transcript, as Claude Code writes it."""
    path = transcript.with_name(transcript.name.removesuffix(".jsonl") + ".meta.json")
    try:
        private_dir(path.parent, "transcript folder")
        with os.fdopen(open_private(path, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as out:
            out.write(json.dumps(meta))
    except (OSError, UserError) as exc:  # optional: without it the SDK reports no parent ids; the run goes on
        log.warning("could not write %s: %s", path, exc)
