"""SessionEnd hooks, fired once when a session closes.

``Session.close`` is synchronous and may be called with or without an event loop
running, so the hooks run on a loop of their own in a short-lived thread; their
budget (Claude Code's 1.5 s, or the longest ``timeout`` set, at most 60 s)
bounds how long closing waits.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any, Mapping

from covey.hooks.runner import HookRegistry

log = logging.getLogger(__name__)

REASONS = ("clear", "resume", "logout", "prompt_input_exit", "other")
"""Claude Code's SessionEnd reasons (what a SessionEnd matcher filters)."""


def fire_session_end(
    hooks: Any, *, reason: str, project_dir: Path, env: Mapping[str, str] | None, session_id: str,
    transcript_path: str | None, mode: str | None = None,
) -> None:
    """Run the session's SessionEnd hooks for ``reason`` and wait for them (within their budget)."""
    groups = _without_callbacks((hooks or {}).get("SessionEnd") or [])
    if not groups:
        return
    registry = HookRegistry({"SessionEnd": groups}, project_dir=project_dir, env=env, session_id=session_id,
                            transcript_path=transcript_path, mode_of=lambda: mode)

    def run() -> None:
        try:
            asyncio.run(registry.run_session_end(reason))
        except Exception:  # a failing hook never keeps a session from closing
            log.exception("SessionEnd hooks failed")

    worker = threading.Thread(target=run, name="covey-session-end", daemon=True)
    worker.start()
    worker.join()


def _without_callbacks(groups: list[Any]) -> list[Any]:
    """An SDK client's callbacks cannot run once its last turn is over: only commands and http hooks run."""
    kept = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            handlers = [h for h in group["hooks"] if not (isinstance(h, dict) and h.get("type") == "callback")]
            if handlers:
                kept.append({**group, "hooks": handlers})
        elif not (isinstance(group, dict) and group.get("type") == "callback"):
            kept.append(group)
    return kept
