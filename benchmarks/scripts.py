"""Scripted models for the benchmarks, and ``LoggingModel``, which timestamps every request in a shared file.

``LoggingModel`` is plain data (a ScriptedModel and a path), so it pickles into
every agent actor; each actor appends one JSON line per request, which lets the
driver line up events across processes (all on one machine: one clock).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from covey.model.scripted import ScriptedModel

MAIN = {"system_contains": "You are covey"}
CHILD = {"system_lacks": "You are covey"}
NOTICE = "<task-notification>"


def rule(when: dict[str, Any], reply: dict[str, Any], latency_s: float | None = None, **extra: Any) -> dict[str, Any]:
    out = {"when": when, "reply": reply, **extra}
    if latency_s is not None:
        out["latency_s"] = latency_s
    return out


def agent_call(prompt: str, *, background: bool) -> dict[str, Any]:
    call = {"description": prompt[:40], "prompt": prompt, "subagent_type": "general-purpose"}
    if background:
        call["run_in_background"] = True
    return {"name": "Agent", "input": call}


def todo(status: str) -> dict[str, Any]:
    """A cheap tool call: TodoWrite with one item (its result names the counts, which tells turns apart)."""
    item = {"content": "step", "status": status, "activeForm": "stepping"}
    return {"tool_use": [{"name": "TodoWrite", "input": {"todos": [item]}}]}


def three_turn_child(latency_s: float) -> list[dict[str, Any]]:
    """A child's three turns: TodoWrite(in_progress), TodoWrite(completed), then its report."""
    return [
        rule({**CHILD, "last_tool_result_contains": "1 completed"}, {"text": "child done"}, latency_s),
        rule({**CHILD, "last_tool_result_contains": "1 in progress"}, todo("completed"), latency_s),
        rule(CHILD, todo("in_progress"), latency_s),
    ]


def scripted(rules: list[dict[str, Any]]) -> ScriptedModel:
    return ScriptedModel.from_dict({"rules": rules})


class LoggingModel:
    """Answers like ``inner``; appends ``{agent, main, sent, done, calls, notice, ...}`` per request to ``path``."""

    def __init__(self, inner: Any, path: str | os.PathLike) -> None:
        self.inner = inner
        self.path = str(path)

    async def create(self, request: Any) -> Any:
        sent = time.time()
        message = await self.inner.create(request)
        done = time.time()
        last = request.messages[-1] if request.messages else {}
        record = {
            "agent": request.agent_id, "pid": os.getpid(), "sent": sent, "done": done,
            "main": any("You are covey" in (b.get("text") or "") for b in request.system),
            "calls": [b.name for b in message.content if b.type == "tool_use"],
            "notice": NOTICE in json.dumps(last.get("content", ""), default=str),
            "n_messages": len(request.messages), "n_tools": len(request.tools),
        }
        with open(self.path, "a", encoding="utf-8") as f:  # opened per call: nothing stays open in the actor
            f.write(json.dumps(record) + "\n")
        return message


def read_log(path: str | os.PathLike) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.exists():
        return []
    return sorted((json.loads(line) for line in p.read_text().splitlines() if line.strip()), key=lambda r: r["sent"])


def new_session(tmp: Path, model: Any, **options: Any) -> Any:
    """A Session on an empty project dir under ``tmp``, transcripts kept under ``tmp`` too."""
    from covey.session import Session

    project = Path(tmp) / "proj"
    project.mkdir(parents=True, exist_ok=True)
    return Session(cwd=str(project), model=model, transcript_dir=str(Path(tmp) / "transcripts"), **options)
