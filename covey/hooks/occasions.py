"""Hook events of an agent's other occasions, with Claude Code's input fields:

- ``StopFailure`` (matcher: the error type): a turn ended by an API error; side effects only.
- ``PostToolBatch`` (no matcher): every call of one reply has its result, before the next request;
  ``additionalContext`` (or a block's reason) goes to the model with those results.
- ``InstructionsLoaded`` (matcher: the load reason): an instructions file (CLAUDE.md ...) was put in
  an agent's context; side effects only.
- ``WorktreeCreate`` (no matcher): replaces covey's git worktree; the hook prints the new worktree's
  path (or answers ``hookSpecificOutput.worktreePath``), and a failure fails the creation.
- ``WorktreeRemove`` (no matcher): a worktree covey made for an agent was removed; side effects only.
- ``Interrupt`` (no matcher): the user stopped the turn; side effects only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from covey.hooks.command import HookAnswer
from covey.hooks.outcomes import HookOutcome, combine
from covey.hooks.team_events import TeamEvents


@dataclass(frozen=True)
class WorktreeMade:
    """What WorktreeCreate hooks answered: the worktree's path, or why there is none."""

    path: str | None = None
    error: str | None = None


class OccasionEvents(TeamEvents):
    """The events above, fired one at a time (a ``HookRegistry`` is one)."""

    async def run_stop_failure(
        self, agent_id: str | None, error: str, *, error_details: str | None = None,
        last_message: str | None = None, cwd: Path | str | None = None,
    ) -> None:
        """``error``: Claude Code's kind (``rate_limit``, ``authentication_failed``, ``billing_error``,
        ``invalid_request``, ``server_error``, ``max_output_tokens``, ``unknown``): what the matcher filters."""
        fields = {"error": error, "error_details": error_details, "last_assistant_message": last_message}
        combine("StopFailure", await self._run("StopFailure", agent_id, error, fields, cwd=cwd))

    async def run_post_tool_batch(
        self, agent_id: str, tool_calls: list[dict[str, Any]], *, session_id: str | None = None,
        cwd: Path | str | None = None,
    ) -> HookOutcome:
        """``tool_calls``: each call's ``tool_name``, ``tool_input``, ``tool_use_id``, ``tool_response``."""
        answers = await self._run("PostToolBatch", agent_id, None, {"tool_calls": tool_calls},
                                  session_id=session_id, cwd=cwd)
        return combine("PostToolBatch", answers)

    async def run_instructions_loaded(
        self, file_path: str, memory_type: str, load_reason: str, *, agent_id: str | None = None,
        cwd: Path | str | None = None,
    ) -> None:
        fields = {"file_path": file_path, "memory_type": memory_type, "load_reason": load_reason}
        combine("InstructionsLoaded", await self._run("InstructionsLoaded", agent_id, load_reason, fields, cwd=cwd))

    def makes_worktrees(self, agent_id: str | None) -> bool:
        """Whether WorktreeCreate hooks make this agent's worktrees instead of git."""
        return bool(self.hooks_for("WorktreeCreate", agent_id))

    async def run_worktree_create(self, name: str, *, agent_id: str | None = None,
                                  cwd: Path | str | None = None) -> WorktreeMade:
        """The path the first hook gave (its stdout's last line, or ``worktreePath``); any failure
        or a hook that gave none fails the creation."""
        answers = await self._run("WorktreeCreate", agent_id, None, {"name": name}, cwd=cwd)
        combine("WorktreeCreate", answers)
        for answer in answers:
            if answer.error or answer.blocked:
                return WorktreeMade(error=f"{answer.command}: {answer.error or answer.reason}")
        path = next((p for p in map(_path_of, answers) if p), None)
        return WorktreeMade(path=path) if path else WorktreeMade(error="no WorktreeCreate hook printed a worktree path")

    async def run_worktree_remove(self, worktree_path: str, *, agent_id: str | None = None,
                                  cwd: Path | str | None = None) -> None:
        combine("WorktreeRemove", await self._run("WorktreeRemove", agent_id, None, {"worktree_path": worktree_path},
                                                  cwd=cwd))

    async def run_interrupt(self, *, source: str = "user", reason: str = "stop", via: str = "client",
                            cwd: Path | str | None = None) -> None:
        """What the TypeScript SDK 0.3.337's CLI sends when the user interrupts a turn."""
        fields = {"source": source, "reason": reason, "via": via}
        combine("Interrupt", await self._run("Interrupt", None, None, fields, cwd=cwd))


def _path_of(answer: HookAnswer) -> str | None:
    lines = (answer.text or "").strip().splitlines()
    return answer.worktree_path or (lines[-1].strip() if lines else None)
