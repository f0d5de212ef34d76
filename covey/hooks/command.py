"""Running one command hook and reading its answer the way Claude Code does.

Exit 0 is success (stdout may hold a JSON answer), exit 2 is a blocking error
whose stderr is the reason the model reads, any other exit is a non-blocking
error: it is logged and the action goes on. A hook that outlives its timeout is
killed with its whole process group, and counts as a non-blocking error.

What a hook prints is bounded twice: at most ``HOOK_READ_LIMIT_CHARS`` of each
stream is kept in memory (the rest is read and dropped, so the hook never blocks
on a full pipe), and each text that reaches the model (plain stdout, a reason, an
``additionalContext``) is cut at ``HOOK_OUTPUT_LIMIT_CHARS``, Claude Code's cap,
with a note saying how long it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from covey.common.bounded import Captured, cut_text, read_bounded
from covey.common.subprocess_env import scrubbed
from covey.hooks.config import CommandHook

HOOK_OUTPUT_LIMIT_CHARS = 10_000
"""Claude Code's cap on the hook output one hook brings into the model's context."""
HOOK_READ_LIMIT_CHARS = 1_000_000
"""What is kept in memory of each stream of one hook (bytes, of an http hook's body): room for a large JSON answer
(an ``updatedInput`` holding a file), not for a hook printing without end."""

PermissionDecision = Literal["allow", "deny", "ask", "defer"]


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
    request_decision: dict[str, Any] | None = None
    """A PermissionRequest hook's ``hookSpecificOutput.decision`` (``behavior`` allow / deny ...)."""
    system_message: str | None = None
    """``systemMessage``: a warning for the person (logged: covey has no transcript view)."""
    worktree_path: str | None = None
    """A WorktreeCreate hook's ``hookSpecificOutput.worktreePath`` (a command may print the path instead)."""


class _WireSpecific(BaseModel):
    model_config = ConfigDict(extra="ignore")

    permission_decision: Literal["allow", "deny", "ask", "defer", "approve", "block"] | None = Field(
        default=None, alias="permissionDecision")
    permission_decision_reason: str | None = Field(default=None, alias="permissionDecisionReason")
    updated_input: dict[str, Any] | None = Field(default=None, alias="updatedInput")
    additional_context: str | None = Field(default=None, alias="additionalContext")
    decision: dict[str, Any] | None = None
    worktree_path: str | None = Field(default=None, alias="worktreePath")


class _WireAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    decision: Literal["block", "approve"] | None = None
    reason: str | None = None
    continue_: bool = Field(default=True, alias="continue")
    stop_reason: str | None = Field(default=None, alias="stopReason")
    system_message: str | None = Field(default=None, alias="systemMessage")
    specific: _WireSpecific = Field(default_factory=_WireSpecific, alias="hookSpecificOutput")


async def run_command(
    hook: CommandHook, payload: dict[str, Any], *, cwd: Path, project_dir: Path, env: Mapping[str, str] | None = None,
    timeout_s: float | None = None, extra_env: Mapping[str, str] | None = None,
) -> HookAnswer:
    """Run ``hook`` with ``env`` (the run's environment; None: this process's) plus ``CLAUDE_PROJECT_DIR``
    and ``extra_env``; ``timeout_s``: the event's limit (default: the hook's own or Claude Code's)."""
    limit = timeout_s or hook.timeout_for(str(payload.get("hook_event_name", "")))
    base = {**(os.environ if env is None else env), **(extra_env or {})}
    try:
        code, out, err = await _execute(hook, payload, cwd, project_dir, base, limit)
    except asyncio.TimeoutError:
        return HookAnswer(hook.command, error=f"timed out after {limit:g}s and was killed")
    except OSError as exc:
        return HookAnswer(hook.command, error=f"could not start: {exc}")
    return read_answer(hook.command, code, out.text, err.text, out_total=out.total_chars, err_total=err.total_chars)


async def _execute(
    hook: CommandHook, payload: dict[str, Any], cwd: Path, project_dir: Path, env: Mapping[str, str], timeout_s: float,
) -> tuple[int, Captured, Captured]:
    pipes = {"stdin": asyncio.subprocess.PIPE, "stdout": asyncio.subprocess.PIPE, "stderr": asyncio.subprocess.PIPE}
    # Own process group (start_new_session): a kill reaches the hook's children too.
    own_env = {**scrubbed(env), "CLAUDE_PROJECT_DIR": str(project_dir)}
    options: dict[str, Any] = {"cwd": cwd, "env": own_env, "start_new_session": True, **pipes}
    if hook.args is not None:
        # Exec form: no shell, so each argument arrives as written, placeholders replaced as plain text.
        program, *args = (_placeholders(part, project_dir) for part in (hook.command, *hook.args))
        proc = await asyncio.create_subprocess_exec(program, *args, **options)
    else:
        proc = await asyncio.create_subprocess_shell(hook.command, **options)
    stdin = json.dumps(payload, default=str).encode()
    try:
        out, err = await asyncio.wait_for(_talk(proc, stdin), timeout_s)
    except BaseException:  # timeout or cancellation: nothing the hook started may outlive it
        _kill_group(proc.pid)
        await proc.wait()
        raise
    return proc.returncode or 0, out, err


async def _talk(proc: asyncio.subprocess.Process, stdin: bytes) -> tuple[Captured, Captured]:
    """``communicate`` with bounded reads: the payload in, the head of each stream out."""
    async def feed() -> None:
        assert proc.stdin is not None
        # A hook need not read its payload: it may exit (closing the pipe) before taking it all.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        proc.stdin.close()

    _, out, err = await asyncio.gather(
        feed(), read_bounded(proc.stdout, HOOK_READ_LIMIT_CHARS), read_bounded(proc.stderr, HOOK_READ_LIMIT_CHARS))
    await proc.wait()
    return out, err


def _placeholders(text: str, project_dir: Path) -> str:
    return text.replace("${CLAUDE_PROJECT_DIR}", str(project_dir)).replace("$CLAUDE_PROJECT_DIR", str(project_dir))


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # it ended on its own between the timeout and the kill


def read_answer(
    command: str, code: int, out: str, err: str, *, out_total: int | None = None, err_total: int | None = None,
) -> HookAnswer:
    """The answer in what a hook printed; ``out_total`` / ``err_total``: a stream's full length when
    ``out`` / ``err`` hold only its head (then it is read as plain text, cut, with a note)."""
    if code == 2:
        reason = _cap(err.strip(), err_total) or f"hook {command!r} exited with code 2"
        return HookAnswer(command, blocked=True, reason=reason)
    if code != 0:
        return HookAnswer(command, error=f"exited with code {code}: {_cap(err.strip(), err_total)}")
    text = out.strip()
    if not text.startswith("{") or len(out) < (out_total or 0):
        return HookAnswer(command, text=_cap(text, out_total) or None)
    try:
        return _capped(_from_json(command, _WireAnswer.model_validate(json.loads(text))))
    except (json.JSONDecodeError, ValidationError) as exc:
        return HookAnswer(command, error=_cap(f"printed invalid JSON output: {exc}"))


def _cap(text: str, total: int | None = None) -> str:
    return cut_text(text, HOOK_OUTPUT_LIMIT_CHARS, what="hook output", total=total)


def _capped(answer: HookAnswer) -> HookAnswer:
    """Every text of a JSON answer cut to the context cap (``updated_input`` is the tool's input, not context)."""
    texts: dict[str, Any] = {f.name: _cap(value) for f in fields(answer)
             if f.name != "command" and isinstance(value := getattr(answer, f.name), str)}
    return replace(answer, **texts)


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
        request_decision=wire.specific.decision,
        system_message=wire.system_message,
        worktree_path=wire.specific.worktree_path,
    )
