"""``HookRegistry``: the session's hooks plus each running agent's definition hooks.

Settings hooks apply to every agent. A definition's hooks are registered under
its agent id, fire only for that agent's calls, and are removed when it ends;
its ``Stop`` hooks become ``SubagentStop`` because the agent is a sub-agent.
All matching hooks of an event run concurrently.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

from covey.hooks.command import HookAnswer, read_answer, run_command
from covey.hooks.config import CommandHook, Handler, HookConfig
from covey.hooks.outcomes import HookOutcome, PreToolOutcome, combine, combine_pre_tool
from covey.hooks.read import parse_hooks

log = logging.getLogger(__name__)

Callback = Callable[[str, dict[str, Any], "str | None"], Awaitable[Any]]
"""``(callback_id, payload, tool_use_id) -> the hook's output``: a claude-agent-sdk hook callback."""


class HookRegistry:
    def __init__(
        self, hooks: Any = None, *, project_dir: Path | str, session_id: str = "",
        transcript_path: str | None = None, source: str = "settings", env: Mapping[str, str] | None = None,
        callback: Callback | None = None,
    ) -> None:
        self.project_dir = Path(project_dir)
        self.callback = callback
        """Runs claude-agent-sdk hook callbacks (the SDK client's), if this run has one."""
        self.env = env
        """What the commands run with (the run's environment); None: this process's."""
        self.session_id = session_id
        self.transcript_path = transcript_path
        self._scopes: dict[str | None, HookConfig] = {None: parse_hooks(hooks, source)}
        """Hook config per scope: ``None`` is session-wide, else an agent id."""

    def register(self, agent_id: str, hooks: Any, *, source: str | None = None) -> None:
        """Add an agent definition's hooks, scoped to ``agent_id``."""
        config = parse_hooks(hooks, source or f"hooks of agent {agent_id!r}")
        if "Stop" in config:
            config.setdefault("SubagentStop", []).extend(config.pop("Stop"))
        if config:
            self._scopes[agent_id] = config

    def remove(self, agent_id: str) -> None:
        self._scopes.pop(agent_id, None)

    def hooks_for(self, event: str, agent_id: str | None, tool_name: str | None = None) -> list[Handler]:
        """Matching hooks, session-wide first; the same command twice runs once."""
        found: dict[str, CommandHook] = {}
        for scope in (None, agent_id) if agent_id is not None else (None,):
            for group in self._scopes.get(scope, {}).get(event, []):
                if group.matches(tool_name):
                    for hook in group.hooks:
                        found.setdefault(hook.command, hook)
        return list(found.values())

    async def run_pre_tool_use(
        self, agent_id: str, tool_name: str, tool_input: dict[str, Any], *,
        session_id: str | None = None, cwd: Path | str | None = None, tool_use_id: str | None = None,
    ) -> PreToolOutcome:
        fields = {"tool_name": tool_name, "tool_input": tool_input, "tool_use_id": tool_use_id}
        answers = await self._run("PreToolUse", agent_id, tool_name, fields, session_id=session_id, cwd=cwd)
        return combine_pre_tool(answers)

    async def run_post_tool_use(
        self, agent_id: str, tool_name: str, tool_input: dict[str, Any], tool_response: Any, *,
        session_id: str | None = None, cwd: Path | str | None = None, tool_use_id: str | None = None,
    ) -> HookOutcome:
        fields = {"tool_name": tool_name, "tool_input": tool_input, "tool_response": tool_response,
                  "tool_use_id": tool_use_id}
        answers = await self._run("PostToolUse", agent_id, tool_name, fields, session_id=session_id, cwd=cwd)
        return combine("PostToolUse", answers)

    async def run_stop(
        self, agent_id: str, *, subagent: bool, last_message: str | None = None,
        stop_hook_active: bool = False, session_id: str | None = None, cwd: Path | str | None = None,
    ) -> HookOutcome:
        """``blocked`` means: do not stop, continue with ``reason`` as the next instruction.

        ``stop_hook_active`` tells the hook it already blocked once, so it can avoid a loop.
        """
        event = "SubagentStop" if subagent else "Stop"
        fields = {"stop_hook_active": stop_hook_active, "last_assistant_message": last_message}
        answers = await self._run(event, agent_id, None, fields, session_id=session_id, cwd=cwd)
        outcome = combine(event, answers)
        # "continue": false means stop for good, which beats a request to keep going.
        return outcome if not outcome.stop else HookOutcome(stop=True, stop_reason=outcome.stop_reason)

    async def run_session_start(self, *, source: str = "startup", cwd: Path | str | None = None) -> HookOutcome:
        answers = await self._run("SessionStart", None, None, {"source": source}, cwd=cwd)
        return combine("SessionStart", answers, text_is_context=True)

    async def run_user_prompt_submit(
        self, prompt: str, *, agent_id: str | None = None, cwd: Path | str | None = None,
    ) -> HookOutcome:
        answers = await self._run("UserPromptSubmit", agent_id, None, {"prompt": prompt}, cwd=cwd)
        return combine("UserPromptSubmit", answers, text_is_context=True)

    async def run_notification(self, message: str, *, agent_id: str | None = None, title: str | None = None) -> None:
        answers = await self._run("Notification", agent_id, None, {"message": message, "title": title})
        combine("Notification", answers)  # only for logging failures: a notification decides nothing

    def notifying(self, asker: Any, agent_id: str) -> Any:
        """``asker``, which first runs the Notification hooks, as Claude Code does when a
        tool call waits for a person's permission (None stays None: nobody is asked)."""
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

    async def _run(
        self, event: str, agent_id: str | None, tool_name: str | None, fields: dict[str, Any], *,
        session_id: str | None = None, cwd: Path | str | None = None,
    ) -> list[HookAnswer]:
        hooks = self.hooks_for(event, agent_id, tool_name)
        if not hooks:
            return []
        workdir = Path(cwd) if cwd is not None else self.project_dir
        payload = {
            "session_id": session_id or self.session_id, "transcript_path": self.transcript_path,
            "cwd": str(workdir), "hook_event_name": event, "agent_id": agent_id, **fields,
        }
        runs = (self._run_one(hook, payload, workdir) for hook in hooks)
        return list(await asyncio.gather(*runs))

    async def _run_one(self, hook: Handler, payload: dict[str, Any], workdir: Path) -> HookAnswer:
        if isinstance(hook, CommandHook):
            return await run_command(hook, payload, cwd=workdir, project_dir=self.project_dir, env=self.env)
        if self.callback is None:
            return HookAnswer(hook.command, error="no claude-agent-sdk client is connected to run it")
        try:
            output = await asyncio.wait_for(
                self.callback(hook.callback_id, payload, payload.get("tool_use_id")), hook.timeout_s)
        except asyncio.TimeoutError:
            return HookAnswer(hook.command, error=f"timed out after {hook.timeout_s:g}s")
        except Exception as exc:  # the SDK answered with an error, or left: the hook failed, the run goes on
            return HookAnswer(hook.command, error=str(exc))
        if not isinstance(output, dict):
            return HookAnswer(hook.command, error="the SDK client gave no answer")
        # The callback's output is what a command hook prints on stdout, exit code 0.
        return read_answer(hook.command, 0, json.dumps(output), "")
