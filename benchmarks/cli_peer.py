"""The peer of the ``cli`` benchmark's fan-outs: Claude Code's CLI as claude-agent-sdk bundles it,
run on the same fake Messages API, and how covey's figures compare."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

WAYS = ("first_on_fresh_service", "back_to_back", "settled")
"""How a user meets a fan-out size: the first time after the service started, right again, and
once the pool has settled."""


def bundled_claude() -> str | None:
    """The Claude Code executable the claude-agent-sdk dev dependency ships, if installed."""
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return str(path) if path.exists() and os.access(path, os.X_OK) else None


def claude_version(claude: str) -> str | None:
    """What ``claude --version`` says (``2.1.337 (Claude Code)``): the peer changes with the SDK installed."""
    try:
        done = subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def peer_env(env: dict[str, str]) -> dict[str, str]:
    """covey's run environment for Claude Code: the same HOME, fake API and key, no telemetry."""
    return {**env, "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}


def ratio(ours: float | None, theirs: float | None) -> float | None:
    return round(ours / theirs, 2) if ours and theirs else None
