"""Scripted models for session tests: the main agent and its children told apart by system prompt."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from covey.model.scripted import ScriptedModel
from covey.session import Session

MAIN = {"system_contains": "You are covey"}
CHILD = {"system_lacks": "You are covey"}


def rule(when: dict[str, Any], reply: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"when": when, "reply": reply, **extra}


def agent_call(prompt: str, *, background: bool | None = None, subagent_type: str | None = "general-purpose",
               description: str = "a delegated task", **extra: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"description": description, "prompt": prompt, **extra}
    if subagent_type is not None:
        call["subagent_type"] = subagent_type
    if background is not None:
        call["run_in_background"] = background
    return {"name": "Agent", "input": call}


def scripted(*rules: dict[str, Any], latency_s: float = 0.0) -> ScriptedModel:
    return ScriptedModel.from_dict({"latency_s": latency_s, "rules": list(rules)})


def main_texts(session: Any, transcript_dir: Any) -> list[str]:
    """The text blocks the main agent was given over the run, from its transcript: the notices
    and messages it read (they are not printed on stdout, as Claude Code prints none)."""
    from covey.transcripts.session_files import project_folder
    from covey.transcripts.transcript import read_transcript, transcript_path

    path = transcript_path(project_folder(transcript_dir, session.cwd), session.session_id, session.main_agent_id,
                           main=True)
    return [block.get("text", "") for record in read_transcript(path) if record["message"].get("role") == "user"
            and isinstance(record["message"].get("content"), list)
            for block in record["message"]["content"] if block.get("type") == "text"]


def write(path: Path, text: str) -> Path:
    """``text`` in ``path``, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def offline_session(tmp_path: Path, **options: Any) -> Session:
    """A Session in ``tmp_path/project`` with a HOME of its own and a model that says nothing."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    (tmp_path / "project").mkdir(exist_ok=True)
    options.setdefault("cwd", str(tmp_path / "project"))
    return Session(env=env, model=ScriptedModel.from_turns([]), **options)
