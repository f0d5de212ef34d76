"""Running one ``agent`` hook: its verifier agent (``covey.hooks.verifier``, which an agent's
lifecycle wires in as ``HookDispatch.verify``) within the hook's ``timeout`` (60 s unless set).

Its verdict is a prompt hook's, read the same way (``covey.hooks.prompt``). A verifier that gives
no verdict, fails or outlives the timeout is a non-blocking error, as a prompt hook's model is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable

from covey.hooks.command import HookAnswer
from covey.hooks.config import AgentHook

Verify = Callable[[AgentHook, dict[str, Any], Path], Awaitable[HookAnswer]]
"""``(hook, payload, cwd) -> answer``: runs the hook's verifier in ``cwd``."""


async def run_agent_hook(
    hook: AgentHook, payload: dict[str, Any], verify: Verify | None, *, cwd: Path, timeout_s: float | None = None,
) -> HookAnswer:
    """The verifier's answer, or the error that stands for it."""
    if verify is None:
        return HookAnswer(hook.command, error="no verifier to run: this agent runs without the session's model")
    limit = timeout_s or hook.timeout_for(str(payload.get("hook_event_name", "")))
    try:
        return await asyncio.wait_for(verify(hook, payload, cwd), limit)
    except asyncio.TimeoutError:
        return HookAnswer(hook.command, error=f"the verifier gave no verdict within {limit:g}s")
    except Exception as exc:  # the model API failed: a hook's failure never fails the agent
        return HookAnswer(hook.command, error=f"the verifier failed: {exc}")
