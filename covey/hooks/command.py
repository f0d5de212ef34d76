"""Running one command hook and reading its answer the way Claude Code does.

Exit 0 is success (stdout may hold a JSON answer), exit 2 is a blocking error
whose stderr is the reason the model reads, any other exit is a non-blocking
error: it is logged and the action goes on. A hook that outlives its timeout is
killed with its whole process group, and counts as a non-blocking error.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from covey.hooks.config import CommandHook

PermissionDecision = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class HookAnswer:
    """What one command said; the runner combines the answers of all matching hooks."""

    command: str
    blocked: bool = False
    reason: str | None = None
    """Why it blocked (exit-2 stderr, JSON ``reason`` or a deny's reason)."""
    stop: bool = False
    """``"continue": false``: the agent should stop altogether."""
    stop_reason: str | None = None
    permission_decision: PermissionDecision | None = None
    updated_input: dict[str, Any] | None = None
    additional_context: str | None = None
    text: str | None = None
    """Plain (non-JSON) stdout of a successful hook."""
    error: str | None = None
    """A non-blocking failure, for the log."""


class _WireSpecific(BaseModel):
    model_config = ConfigDict(extra="ignore")

    permission_decision: Literal["allow", "deny", "ask", "approve", "block"] | None = Field(
        default=None, alias="permissionDecision")
    permission_decision_reason: str | None = Field(default=None, alias="permissionDecisionReason")
    updated_input: dict[str, Any] | None = Field(default=None, alias="updatedInput")
    additional_context: str | None = Field(default=None, alias="additionalContext")


class _WireAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    decision: Literal["block", "approve"] | None = None
    reason: str | None = None
    continue_: bool = Field(default=True, alias="continue")
    stop_reason: str | None = Field(default=None, alias="stopReason")
    specific: _WireSpecific = Field(default_factory=_WireSpecific, alias="hookSpecificOutput")


async def run_command(
    hook: CommandHook, payload: dict[str, Any], *, cwd: Path, project_dir: Path, env: Mapping[str, str] | None = None,
) -> HookAnswer:
    """Run ``hook`` with ``env`` (the run's environment; None: this process's) plus ``CLAUDE_PROJECT_DIR``."""
    try:
        code, out, err = await _execute(hook, payload, cwd, project_dir, os.environ if env is None else env)
    except asyncio.TimeoutError:
        return HookAnswer(hook.command, error=f"timed out after {hook.timeout_s:g}s and was killed")
    except OSError as exc:
        return HookAnswer(hook.command, error=f"could not start: {exc}")
    return read_answer(hook.command, code, out, err)


async def _execute(
    hook: CommandHook, payload: dict[str, Any], cwd: Path, project_dir: Path, env: Mapping[str, str],
) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_shell(
        hook.command, cwd=cwd, env={**env, "CLAUDE_PROJECT_DIR": str(project_dir)}, start_new_session=True,  # own group: a kill reaches its children
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    stdin = json.dumps(payload, default=str).encode()
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), hook.timeout_s)
    except BaseException:  # timeout or cancellation: nothing the hook started may outlive it
        _kill_group(proc.pid)
        await proc.wait()
        raise
    return proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # it ended on its own between the timeout and the kill


def read_answer(command: str, code: int, out: str, err: str) -> HookAnswer:
    if code == 2:
        return HookAnswer(command, blocked=True, reason=err.strip() or f"hook {command!r} exited with code 2")
    if code != 0:
        return HookAnswer(command, error=f"exited with code {code}: {err.strip()}")
    text = out.strip()
    if not text.startswith("{"):
        return HookAnswer(command, text=text or None)
    try:
        return _from_json(command, _WireAnswer.model_validate(json.loads(text)))
    except (json.JSONDecodeError, ValidationError) as exc:
        return HookAnswer(command, error=f"printed invalid JSON output: {exc}")


def _from_json(command: str, wire: _WireAnswer) -> HookAnswer:
    decision = {"approve": "allow", "block": "deny"}.get(wire.specific.permission_decision or "",
                                                         wire.specific.permission_decision)
    if decision is None and wire.decision == "approve":  # the older top-level spelling
        decision = "allow"
    # A permission decision's own reason is what the model (deny) or the person (ask) reads.
    own = wire.specific.permission_decision_reason
    reason = (own or wire.reason) if decision in ("deny", "ask") else (wire.reason or own)
    return HookAnswer(
        command,
        blocked=wire.decision == "block" or decision == "deny",
        reason=reason,
        stop=not wire.continue_,
        stop_reason=wire.stop_reason,
        permission_decision=decision,  # type: ignore[arg-type]
        updated_input=wire.specific.updated_input,
        additional_context=wire.specific.additional_context,
    )
