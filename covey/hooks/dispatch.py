"""Which hooks an event runs, and running them: the session's hooks plus each running agent's
definition hooks (``HookDispatch``, the base of ``HookRegistry``).

Settings hooks apply to every agent. A definition's hooks are registered under
its agent id, fire only for that agent's calls, and are removed when it ends;
its ``Stop`` hooks become ``SubagentStop`` because the agent is a sub-agent.
All matching hooks of an event run concurrently; ``async`` ones run in the
background (``covey.hooks.background``).
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

from covey.events import Event, HookEvent, new_uuid
from covey.hooks.agent_hook import Verify, run_agent_hook
from covey.hooks.background import Background
from covey.hooks.command import HookAnswer, read_answer, run_command
from covey.hooks.conditions import if_matches
from covey.hooks.config import (
    TOOL_EVENTS, AgentHook, CallbackHook, CommandHook, Handler, HookConfig, HttpHook, McpToolHook, PromptHook,
)
from covey.hooks.http import run_http
from covey.hooks.mcp_tool import McpCall, run_mcp_tool
from covey.hooks.prompt import run_prompt
from covey.hooks.read import parse_hooks

Callback = Callable[[str, dict[str, Any], "str | None"], Awaitable[Any]]
"""``(callback_id, payload, tool_use_id) -> the hook's output``: a claude-agent-sdk hook callback."""


@dataclass(frozen=True)
class AgentInfo:
    """Who an agent is, as its hooks' payloads say it (Claude Code's ``agent_id`` / ``agent_type``)."""

    agent_type: str
    subagent: bool
    transcript_path: str | None = None
    """The agent's own transcript (a sub-agent's ``agent_transcript_path``)."""


@dataclass(frozen=True)
class HookedCall:
    """The tool call a tool event is about: what ``matcher`` and ``if`` look at."""

    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str | None = None
    subject: str | None = None
    """What a permission rule's parentheses match (a command, a path): ``if`` needs it."""


class HookDispatch:
    """The hooks in force per scope (session-wide, each agent's) and how one hook of each kind runs."""

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
        self.model: Any = None
        """The session's model (a ``covey.model.Model``): ``prompt`` hooks ask it (None: they cannot run)."""
        self.verify: Verify | None = None
        """Runs ``agent`` hooks' verifiers (``covey.hooks.verifier``, wired with the model and the agent's
        permission policy); None: they cannot run."""
        self.mcp_call: McpCall | None = None
        """Calls a tool of one of the agent's MCP servers (``mcp_tool`` hooks); None: none is connected."""
        self.background = Background()
        self.pre_tool_context: dict[str, str] = {}
        """A PreToolUse hook's ``additionalContext`` per tool_use id, until the call's result carries it."""
        self.session_env: dict[str, str] = {}
        """What SessionStart hooks wrote to ``CLAUDE_ENV_FILE``: variables for the agent's tools."""
        self.on_event: Callable[[Event], None] | None = None
        """Where each hook's ``hook_started`` / ``hook_response`` go (``--include-hook-events``); None: nowhere."""
        self.halted: str | None = None
        """Why a hook answered ``"continue": false`` (its ``stopReason``, or a default): the agent's
        loop ends after the step that ran it, with ``terminal_reason: "hook_stopped"``."""
        self.deferred: dict[str, Any] | None = None
        """The call a PreToolUse hook deferred (``permissionDecision: "defer"``): ``id``, ``name``,
        ``input``, until the loop takes it (``take_deferred``) and ends the run on it."""
        self._agents: dict[str, AgentInfo] = {}
        self._scopes: dict[str | None, HookConfig] = {None: parse_hooks(hooks, source)}
        """Hook config per scope: ``None`` is session-wide, else an agent id."""

    def halt(self, event: str, stop_reason: str | None) -> None:
        """A hook of ``event`` said ``"continue": false``: the first reason given stands."""
        self.halted = self.halted or stop_reason or f"A {event} hook stopped the run."

    def take_deferred(self) -> dict[str, Any] | None:
        deferred, self.deferred = self.deferred, None
        return deferred

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
        self, event: str, agent_id: str | None, value: str | None = None, *, call: HookedCall | None = None,
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

    def _condition_holds(self, hook: Handler, event: str, call: HookedCall | None, cwd: Path | None) -> bool:
        if hook.if_rule is None:
            return True
        if event not in TOOL_EVENTS or call is None:
            return False  # Claude Code: `if` on an event about no tool call never runs the hook
        return if_matches(hook.if_rule, call.tool_name, call.subject, cwd=cwd or self.project_dir,
                          project_dir=self.project_dir)


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
        session_id: str | None = None, cwd: Path | str | None = None, call: HookedCall | None = None,
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
        if self.on_event is None:
            return await self._answer(hook, payload, workdir, timeout_s, extra_env)
        event, hook_id = payload["hook_event_name"], new_uuid()
        name = f"{event}:{subject}" if (subject := payload.get("tool_name") or payload.get("source")) else event
        shown = dict(session_id=self.session_id or "", hook_id=hook_id, hook_name=name, hook_event=event)
        self.on_event(HookEvent(subtype="hook_started", **shown))
        answer = await self._answer(hook, payload, workdir, timeout_s, extra_env)
        self.on_event(HookEvent(subtype="hook_response", **shown, output=_said(answer),
                                exit_code=1 if answer.error else 2 if answer.blocked else 0,
                                outcome="error" if answer.error else "success"))
        return answer

    async def _answer(
        self, hook: Handler, payload: dict[str, Any], workdir: Path, timeout_s: float | None,
        extra_env: Mapping[str, str] | None = None,
    ) -> HookAnswer:
        limit = timeout_s or hook.timeout_for(payload["hook_event_name"])
        if isinstance(hook, CommandHook):
            return await run_command(hook, payload, cwd=workdir, project_dir=self.project_dir, env=self.env,
                                     timeout_s=limit, extra_env=extra_env)
        if isinstance(hook, HttpHook):
            return await run_http(hook, payload, env=self.env if self.env is not None else os.environ, timeout_s=limit)
        if isinstance(hook, PromptHook):
            return await run_prompt(hook, payload, self.model, env=self.env, timeout_s=limit)
        if isinstance(hook, AgentHook):
            return await run_agent_hook(hook, payload, self.verify, cwd=workdir, timeout_s=limit)
        if isinstance(hook, McpToolHook):
            return await run_mcp_tool(hook, payload, self.mcp_call, timeout_s=limit)
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


def _said(answer: HookAnswer) -> str:
    """What a hook said, in one text: its block reason, context or plain output, or its error."""
    parts = [answer.error, answer.reason, answer.stop_reason, answer.additional_context, answer.text]
    return "\n".join(part for part in parts if part)
