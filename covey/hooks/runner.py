"""``HookRegistry``: one ``run_*`` method per hook event, each building Claude Code's payload for
its event and combining what the hooks answered (covey/hooks/outcomes.py). Which hooks run,
and how each one runs, is ``HookDispatch``'s (covey/hooks/dispatch.py).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Mapping

from covey.hooks.command import HookAnswer
from covey.hooks.config import SESSION_END_BUDGET_S, Handler
from covey.hooks.dispatch import HookedCall
from covey.hooks.env_file import exported, new_env_file
from covey.hooks.occasions import OccasionEvents
from covey.hooks.outcomes import (
    HookOutcome, PreToolOutcome, RequestVerdict, combine, combine_permission_request, combine_pre_tool,
)

log = logging.getLogger(__name__)

SESSION_END_MAX_S = 60.0


class HookRegistry(OccasionEvents):
    """The session's hooks and its running agents' (``HookDispatch``), fired one event at a time
    (the task board's and the team's events are ``TeamEvents``; worktrees, API failures, tool
    batches, instructions and interrupts ``OccasionEvents``)."""

    # -- tool events -----------------------------------------------------------------

    async def run_pre_tool_use(
        self, agent_id: str, tool_name: str, tool_input: dict[str, Any], *,
        session_id: str | None = None, cwd: Path | str | None = None, tool_use_id: str | None = None,
        subject: str | None = None,
    ) -> PreToolOutcome:
        call = HookedCall(tool_name, tool_input, tool_use_id, subject)
        answers = await self._tool_event("PreToolUse", agent_id, call, {}, session_id=session_id, cwd=cwd)
        return combine_pre_tool(answers)

    async def run_post_tool_use(
        self, agent_id: str, tool_name: str, tool_input: dict[str, Any], tool_response: Any, *,
        session_id: str | None = None, cwd: Path | str | None = None, tool_use_id: str | None = None,
        subject: str | None = None,
    ) -> HookOutcome:
        call = HookedCall(tool_name, tool_input, tool_use_id, subject)
        fields = {"tool_response": tool_response}
        answers = await self._tool_event("PostToolUse", agent_id, call, fields, session_id=session_id, cwd=cwd)
        return combine("PostToolUse", answers)

    async def run_post_tool_use_failure(
        self, agent_id: str, tool_name: str, tool_input: dict[str, Any], error: str, *, is_interrupt: bool = False,
        session_id: str | None = None, cwd: Path | str | None = None, tool_use_id: str | None = None,
        subject: str | None = None,
    ) -> HookOutcome:
        """A tool that ran and failed: ``blocked`` (exit 2) and ``additional_context`` are feedback for the model."""
        call = HookedCall(tool_name, tool_input, tool_use_id, subject)
        fields = {"error": error, "is_interrupt": is_interrupt}
        answers = await self._tool_event("PostToolUseFailure", agent_id, call, fields, session_id=session_id, cwd=cwd)
        return combine("PostToolUseFailure", answers)

    async def run_permission_request(
        self, agent_id: str, tool_name: str, tool_input: dict[str, Any], *, subject: str | None = None,
        suggestions: list[dict[str, Any]] | None = None, cwd: Path | str | None = None,
    ) -> RequestVerdict | None:
        """Before a person is asked: hooks may allow or deny on their behalf (None: ask as usual)."""
        call = HookedCall(tool_name, tool_input, None, subject)
        fields = {"permission_suggestions": suggestions} if suggestions else {}
        answers = await self._tool_event("PermissionRequest", agent_id, call, fields, cwd=cwd, with_id=False)
        return combine_permission_request(answers)

    async def _tool_event(
        self, event: str, agent_id: str, call: HookedCall, fields: dict[str, Any], *, session_id: str | None = None,
        cwd: Path | str | None = None, with_id: bool = True,
    ) -> list[HookAnswer]:
        base: dict[str, Any] = {"tool_name": call.tool_name, "tool_input": call.tool_input}
        if with_id:  # PermissionRequest carries no tool_use_id, as in Claude Code
            base["tool_use_id"] = call.tool_use_id
        return await self._run(event, agent_id, call.tool_name, {**base, **fields}, session_id=session_id, cwd=cwd,
                               call=call)

    # -- the agent's life ------------------------------------------------------------

    async def run_stop(
        self, agent_id: str, *, subagent: bool, last_message: str | None = None,
        stop_hook_active: bool = False, session_id: str | None = None, cwd: Path | str | None = None,
    ) -> HookOutcome:
        """``blocked`` means: do not stop, continue with ``reason`` as the next instruction.

        ``stop_hook_active`` tells the hook it already blocked once, so it can avoid a loop.
        """
        event = "SubagentStop" if subagent else "Stop"
        fields: dict[str, Any] = {"stop_hook_active": stop_hook_active, "last_assistant_message": last_message}
        value = None
        if subagent:
            info = self._agents.get(agent_id)
            value = info.agent_type if info else ""
            fields.update(agent_id=agent_id, agent_type=value,
                          agent_transcript_path=info.transcript_path if info else self.transcript_path)
        answers = await self._run(event, agent_id, value, fields, session_id=session_id, cwd=cwd)
        outcome = combine(event, answers)
        # "continue": false means stop for good, which beats a request to keep going.
        if outcome.stop:
            return HookOutcome(stop=True, stop_reason=outcome.stop_reason)
        if not outcome.blocked and outcome.additional_context:
            # Claude Code: a Stop hook's additionalContext is feedback that keeps the conversation going.
            return HookOutcome(blocked=True, reason=outcome.additional_context)
        if not outcome.blocked and self.after_stop is not None:
            return await self.after_stop(agent_id)  # a teammate: its tasks' TaskCompleted, then TeammateIdle
        return outcome

    async def run_session_start(
        self, *, source: str = "startup", cwd: Path | str | None = None, model: str | None = None,
        agent_type: str | None = None,
    ) -> HookOutcome:
        """``source``: ``startup``, ``resume``, ``clear``, ``compact`` or ``fork`` (what the matcher filters)."""
        fields: dict[str, Any] = {"source": source}
        fields.update({k: v for k, v in (("model", model), ("agent_type", agent_type)) if v})
        if not self.hooks_for("SessionStart", None, source):
            return HookOutcome()
        env_file = new_env_file()
        answers = await self._run("SessionStart", None, source, fields, cwd=cwd,
                                  extra_env={"CLAUDE_ENV_FILE": str(env_file)})
        self.session_env = await exported(env_file, self.env if self.env is not None else os.environ)
        return combine("SessionStart", answers, text_is_context=True)

    async def run_subagent_start(self, agent_id: str, agent_type: str, *, cwd: Path | str | None = None) -> HookOutcome:
        """A sub-agent is starting: its ``additional_context`` goes into the sub-agent's context."""
        fields = {"agent_id": agent_id, "agent_type": agent_type}
        answers = await self._run("SubagentStart", agent_id, agent_type, fields, cwd=cwd)
        outcome = combine("SubagentStart", answers)
        return HookOutcome(additional_context=outcome.additional_context)  # it cannot block the sub-agent

    async def run_user_prompt_submit(
        self, prompt: str, *, agent_id: str | None = None, cwd: Path | str | None = None,
    ) -> HookOutcome:
        answers = await self._run("UserPromptSubmit", agent_id, None, {"prompt": prompt}, cwd=cwd)
        return combine("UserPromptSubmit", answers, text_is_context=True)

    async def run_pre_compact(
        self, trigger: str, *, custom_instructions: str | None = None, agent_id: str | None = None,
        cwd: Path | str | None = None,
    ) -> HookOutcome:
        """Before a compaction (``trigger``: ``manual`` or ``auto``): ``blocked`` (exit 2, ``decision:
        block``) means do not compact; what the hooks print (plain stdout or ``additionalContext``)
        is ``additional_context``: instructions added to the summary request, as in Claude Code."""
        fields = {"trigger": trigger, "custom_instructions": custom_instructions}
        answers = await self._run("PreCompact", agent_id, trigger, fields, cwd=cwd)
        return combine("PreCompact", answers, text_is_context=True)

    async def run_post_compact(
        self, trigger: str, compact_summary: str, *, agent_id: str | None = None, cwd: Path | str | None = None,
    ) -> None:
        """After a compaction, with the summary it made (``compact_summary``): side effects only."""
        fields = {"trigger": trigger, "compact_summary": compact_summary}
        combine("PostCompact", await self._run("PostCompact", agent_id, trigger, fields, cwd=cwd))

    async def run_setup(self, trigger: str, *, cwd: Path | str | None = None) -> None:
        """``--init`` / ``--init-only`` (``init``) or ``--maintenance``: side effects only, output discarded."""
        combine("Setup", await self._run("Setup", None, trigger, {"trigger": trigger}, cwd=cwd))

    async def run_session_end(self, reason: str = "other", *, cwd: Path | str | None = None) -> None:
        """The session ends (``reason``: ``clear``, ``logout``, ``prompt_input_exit``, ``other``...).
        The hooks share Claude Code's short budget: 1.5 s, or the longest ``timeout`` set (at most 60 s),
        or ``CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS``."""
        hooks = self.hooks_for("SessionEnd", None, reason)
        if not hooks:
            return
        budget = _session_end_budget(hooks, self.env if self.env is not None else os.environ)
        answers = await self._run("SessionEnd", None, reason, {"reason": reason}, cwd=cwd, timeout_s=budget)
        combine("SessionEnd", answers)

    async def run_notification(
        self, message: str, *, agent_id: str | None = None, title: str | None = None,
        notification_type: str = "permission_prompt",
    ) -> None:
        fields = {"message": message, "title": title, "notification_type": notification_type}
        answers = await self._run("Notification", agent_id, notification_type, fields)
        combine("Notification", answers)  # only for logging failures: a notification decides nothing

    def notifying(self, asker: Any, agent_id: str) -> Any:
        """``asker``, which first runs the Notification hooks (``permission_prompt``), as Claude Code
        does when a tool call waits for a person's permission (None stays None: nobody is asked)."""
        if asker is None:
            return None

        async def ask(request: Any) -> Any:
            try:
                await self.run_notification(f"covey needs your permission to use {request.tool_name}",
                                            agent_id=agent_id, title="Permission needed")
            except Exception:  # a notification decides nothing; the person is still asked
                log.exception("Notification hooks failed")
            return await asker(request)

        return ask


def _session_end_budget(hooks: list[Handler], env: Mapping[str, str]) -> float:
    explicit = env.get("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS")
    if explicit and explicit.isdigit():
        return int(explicit) / 1000
    longest = max((h.timeout_s for h in hooks if h.timeout_s is not None), default=0.0)
    return min(max(SESSION_END_BUDGET_S, longest), SESSION_END_MAX_S)
