"""``HookRegistry``: the session's hooks plus each running agent's definition hooks.

Settings hooks apply to every agent. A definition's hooks are registered under
its agent id, fire only for that agent's calls, and are removed when it ends;
its ``Stop`` hooks become ``SubagentStop`` because the agent is a sub-agent.
All matching hooks of an event run concurrently; ``async`` ones run in the
background (``covey.hooks.background``). The ``run_*`` methods build Claude
Code's payload for each event and combine what the hooks answered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

from covey.hooks.background import Background
from covey.hooks.command import HookAnswer, read_answer, run_command
from covey.hooks.conditions import if_matches
from covey.hooks.env_file import exported, new_env_file
from covey.hooks.config import (
    SESSION_END_BUDGET_S, TOOL_EVENTS, CallbackHook, CommandHook, Handler, HookConfig, HttpHook,
)
from covey.hooks.http import run_http
from covey.hooks.outcomes import (
    HookOutcome, PreToolOutcome, RequestVerdict, combine, combine_permission_request, combine_pre_tool,
)
from covey.hooks.read import parse_hooks

log = logging.getLogger(__name__)

Callback = Callable[[str, dict[str, Any], "str | None"], Awaitable[Any]]
"""``(callback_id, payload, tool_use_id) -> the hook's output``: a claude-agent-sdk hook callback."""

SESSION_END_MAX_S = 60.0


@dataclass(frozen=True)
class AgentInfo:
    """Who an agent is, as its hooks' payloads say it (Claude Code's ``agent_id`` / ``agent_type``)."""

    agent_type: str
    subagent: bool
    transcript_path: str | None = None
    """The agent's own transcript (a sub-agent's ``agent_transcript_path``)."""


@dataclass(frozen=True)
class ToolCall:
    """The tool call a tool event is about: what ``matcher`` and ``if`` look at."""

    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str | None = None
    subject: str | None = None
    """What a permission rule's parentheses match (a command, a path): ``if`` needs it."""


class HookRegistry:
    def __init__(
        self, hooks: Any = None, *, project_dir: Path | str, session_id: str = "",
        transcript_path: str | None = None, source: str = "settings", env: Mapping[str, str] | None = None,
        callback: Callback | None = None, mode_of: Callable[[], str | None] | None = None,
    ) -> None:
        self.project_dir = Path(project_dir)
        self.callback = callback
        """Runs claude-agent-sdk hook callbacks (the SDK client's), if this run has one."""
        self.env = env
        """What the commands run with (the run's environment); None: this process's."""
        self.session_id = session_id
        self.transcript_path = transcript_path
        """The session's transcript (the main agent's): every payload's ``transcript_path``."""
        self.mode_of = mode_of
        """The current permission mode, for payloads' ``permission_mode`` (None: left out)."""
        self.background = Background()
        self.pre_tool_context: dict[str, str] = {}
        """A PreToolUse hook's ``additionalContext`` per tool_use id, until the call's result carries it."""
        self.session_env: dict[str, str] = {}
        """What SessionStart hooks wrote to ``CLAUDE_ENV_FILE``: variables for the agent's tools."""
        self._agents: dict[str, AgentInfo] = {}
        self._scopes: dict[str | None, HookConfig] = {None: parse_hooks(hooks, source)}
        """Hook config per scope: ``None`` is session-wide, else an agent id."""

    def describe(self, agent_id: str, *, agent_type: str, subagent: bool, transcript_path: str | None = None) -> None:
        """Say who ``agent_id`` is: a sub-agent's payloads carry its ``agent_id`` and ``agent_type``."""
        self._agents[agent_id] = AgentInfo(agent_type, subagent, transcript_path)

    def register(self, agent_id: str, hooks: Any, *, source: str | None = None) -> None:
        """Add an agent definition's hooks, scoped to ``agent_id``."""
        config = parse_hooks(hooks, source or f"hooks of agent {agent_id!r}")
        if "Stop" in config:
            config.setdefault("SubagentStop", []).extend(config.pop("Stop"))
        if config:
            self._scopes[agent_id] = config

    def remove(self, agent_id: str) -> None:
        self._scopes.pop(agent_id, None)

    def hooks_for(
        self, event: str, agent_id: str | None, value: str | None = None, *, call: ToolCall | None = None,
        cwd: Path | None = None,
    ) -> list[Handler]:
        """Matching hooks, session-wide first; the same handler twice runs once. ``value`` is what
        the event's matcher filters (a tool name, a session source, an agent type...)."""
        found: dict[str, Handler] = {}
        for scope in (None, agent_id) if agent_id is not None else (None,):
            for group in self._scopes.get(scope, {}).get(event, []):
                if group.matches(value, tool=event in TOOL_EVENTS):
                    for hook in group.hooks:
                        if self._condition_holds(hook, event, call, cwd):
                            found.setdefault(hook.key, hook)
        return list(found.values())

    def _condition_holds(self, hook: Handler, event: str, call: ToolCall | None, cwd: Path | None) -> bool:
        if hook.if_rule is None:
            return True
        if event not in TOOL_EVENTS or call is None:
            return False  # Claude Code: `if` on an event about no tool call never runs the hook
        return if_matches(hook.if_rule, call.tool_name, call.subject, cwd=cwd or self.project_dir,
                          project_dir=self.project_dir)

    # -- tool events -----------------------------------------------------------------

    async def run_pre_tool_use(
        self, agent_id: str, tool_name: str, tool_input: dict[str, Any], *,
        session_id: str | None = None, cwd: Path | str | None = None, tool_use_id: str | None = None,
        subject: str | None = None,
    ) -> PreToolOutcome:
        call = ToolCall(tool_name, tool_input, tool_use_id, subject)
        answers = await self._tool_event("PreToolUse", agent_id, call, {}, session_id=session_id, cwd=cwd)
        return combine_pre_tool(answers)

    async def run_post_tool_use(
        self, agent_id: str, tool_name: str, tool_input: dict[str, Any], tool_response: Any, *,
        session_id: str | None = None, cwd: Path | str | None = None, tool_use_id: str | None = None,
        subject: str | None = None,
    ) -> HookOutcome:
        call = ToolCall(tool_name, tool_input, tool_use_id, subject)
        fields = {"tool_response": tool_response}
        answers = await self._tool_event("PostToolUse", agent_id, call, fields, session_id=session_id, cwd=cwd)
        return combine("PostToolUse", answers)

    async def run_post_tool_use_failure(
        self, agent_id: str, tool_name: str, tool_input: dict[str, Any], error: str, *, is_interrupt: bool = False,
        session_id: str | None = None, cwd: Path | str | None = None, tool_use_id: str | None = None,
        subject: str | None = None,
    ) -> HookOutcome:
        """A tool that ran and failed: ``blocked`` (exit 2) and ``additional_context`` are feedback for the model."""
        call = ToolCall(tool_name, tool_input, tool_use_id, subject)
        fields = {"error": error, "is_interrupt": is_interrupt}
        answers = await self._tool_event("PostToolUseFailure", agent_id, call, fields, session_id=session_id, cwd=cwd)
        return combine("PostToolUseFailure", answers)

    async def run_permission_request(
        self, agent_id: str, tool_name: str, tool_input: dict[str, Any], *, subject: str | None = None,
        suggestions: list[dict[str, Any]] | None = None, cwd: Path | str | None = None,
    ) -> RequestVerdict | None:
        """Before a person is asked: hooks may allow or deny on their behalf (None: ask as usual)."""
        call = ToolCall(tool_name, tool_input, None, subject)
        fields = {"permission_suggestions": suggestions} if suggestions else {}
        answers = await self._tool_event("PermissionRequest", agent_id, call, fields, cwd=cwd, with_id=False)
        return combine_permission_request(answers)

    async def _tool_event(
        self, event: str, agent_id: str, call: ToolCall, fields: dict[str, Any], *, session_id: str | None = None,
        cwd: Path | str | None = None, with_id: bool = True,
    ) -> list[HookAnswer]:
        base = {"tool_name": call.tool_name, "tool_input": call.tool_input}
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

    # -- running ---------------------------------------------------------------------

    def payload(self, event: str, agent_id: str | None, fields: dict[str, Any], *,
                session_id: str | None = None, cwd: Path) -> dict[str, Any]:
        """Claude Code's common input fields, then the event's own."""
        payload: dict[str, Any] = {
            "session_id": session_id or self.session_id, "transcript_path": self.transcript_path,
            "cwd": str(cwd),
        }
        mode = self.mode_of() if self.mode_of is not None else None
        if mode is not None:
            payload["permission_mode"] = mode
        payload["hook_event_name"] = event
        info = self._agents.get(agent_id) if agent_id is not None else None
        if agent_id is not None and (info is None or info.subagent):
            # Claude Code names the agent only inside a sub-agent (an undescribed id is named too).
            payload["agent_id"] = agent_id
            if info is not None:
                payload["agent_type"] = info.agent_type
        return {**payload, **fields}

    async def _run(
        self, event: str, agent_id: str | None, value: str | None, fields: dict[str, Any], *,
        session_id: str | None = None, cwd: Path | str | None = None, call: ToolCall | None = None,
        timeout_s: float | None = None, extra_env: Mapping[str, str] | None = None,
    ) -> list[HookAnswer]:
        workdir = Path(cwd) if cwd is not None else self.project_dir
        hooks = self.hooks_for(event, agent_id, value, call=call, cwd=workdir)
        if not hooks:
            return []
        payload = self.payload(event, agent_id, fields, session_id=session_id, cwd=workdir)
        waited = []
        for hook in hooks:
            if isinstance(hook, CommandHook) and hook.background:
                self.background.start(event, hook, self._run_one(hook, payload, workdir, None, extra_env))
            else:
                waited.append(self._run_one(hook, payload, workdir, timeout_s, extra_env))
        return list(await asyncio.gather(*waited))

    async def _run_one(
        self, hook: Handler, payload: dict[str, Any], workdir: Path, timeout_s: float | None,
        extra_env: Mapping[str, str] | None = None,
    ) -> HookAnswer:
        limit = timeout_s or hook.timeout_for(payload["hook_event_name"])
        if isinstance(hook, CommandHook):
            return await run_command(hook, payload, cwd=workdir, project_dir=self.project_dir, env=self.env,
                                     timeout_s=limit, extra_env=extra_env)
        if isinstance(hook, HttpHook):
            return await run_http(hook, payload, env=self.env if self.env is not None else os.environ, timeout_s=limit)
        return await self._run_callback(hook, payload, limit)

    async def _run_callback(self, hook: CallbackHook, payload: dict[str, Any], limit: float) -> HookAnswer:
        if self.callback is None:
            return HookAnswer(hook.command, error="no claude-agent-sdk client is connected to run it")
        try:
            output = await asyncio.wait_for(self.callback(hook.callback_id, payload, payload.get("tool_use_id")), limit)
        except asyncio.TimeoutError:
            return HookAnswer(hook.command, error=f"timed out after {limit:g}s")
        except Exception as exc:  # the SDK answered with an error, or left: the hook failed, the run goes on
            return HookAnswer(hook.command, error=str(exc))
        if not isinstance(output, dict):
            return HookAnswer(hook.command, error="the SDK client gave no answer")
        # The callback's output is what a command hook prints on stdout, exit code 0.
        return read_answer(hook.command, 0, json.dumps(output), "")


def _session_end_budget(hooks: list[Handler], env: Mapping[str, str]) -> float:
    explicit = env.get("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS")
    if explicit and explicit.isdigit():
        return int(explicit) / 1000
    longest = max((h.timeout_s for h in hooks if h.timeout_s is not None), default=0.0)
    return min(max(SESSION_END_BUDGET_S, longest), SESSION_END_MAX_S)
