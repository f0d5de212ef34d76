"""``CLAUDE_ENV_FILE``: where SessionStart hooks persist environment variables for the agent's Bash calls.

Claude Code hands SessionStart hooks a file path; lines they append (``export
NODE_ENV=production``) apply to every later Bash command. Covey sources the file
once, after the hooks, in a POSIX shell started with the run's environment, and
keeps what changed: those variables join the environment the agent's tools run with.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from pathlib import Path
from typing import Mapping

from covey.common.subprocess_env import scrubbed

log = logging.getLogger(__name__)


def new_env_file() -> Path:
    descriptor, name = tempfile.mkstemp(prefix="covey-env-", suffix=".sh")
    os.close(descriptor)
    return Path(name)


async def exported(path: Path, base: Mapping[str, str]) -> dict[str, str]:
    """The variables sourcing ``path`` sets or changes over ``base`` ({} if it is empty or fails)."""
    try:
        if not path.read_text().strip():
            return {}
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", '. "$1" >/dev/null 2>&1; env -0', "sh", str(path), env=scrubbed(base),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, stdin=asyncio.subprocess.DEVNULL,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
    except (OSError, asyncio.TimeoutError) as exc:
        log.warning("could not read CLAUDE_ENV_FILE %s: %s", path, exc)
        return {}
    finally:
        path.unlink(missing_ok=True)
    after = dict(item.split("=", 1) for item in out.decode(errors="replace").split("\0") if "=" in item)
    # The shell adds a few of its own (PWD, SHLVL, _): only what the file meant to set is kept.
    return {k: v for k, v in after.items() if base.get(k) != v and k not in ("PWD", "OLDPWD", "SHLVL", "_")}
