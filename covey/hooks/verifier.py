"""An ``agent`` hook's verifier: a small agent loop, run in-process, that gets the hook's prompt
with the event's payload (``$ARGUMENTS``, as a prompt hook's model does), may look at the files
with Read, Grep and Glob for up to ``MAX_TURNS`` turns, and gives its verdict by calling
``StructuredOutput`` with ``{"ok": true}`` or ``{"ok": false, "reason": "..."}`` (Claude Code's
agent hooks).

The verdict is read exactly as a prompt hook's (``covey.hooks.prompt.read_verdict``); a verifier
that ends its turn without the call has its final text read as a prompt hook's answer, and one
that gives no verdict (the turns used up, the call failed five times, a refusal) is a
non-blocking error. It asks the model the agent's hooks were wired with (the session's, counted
as the agent's spending); its tool calls pass the agent's permission policy with nobody to ask
(what would need a person is denied) and fire no hooks. ``covey.hooks.agent_hook`` bounds it in time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from covey.hooks.agent_hook import Verify
from covey.hooks.command import HookAnswer
from covey.hooks.config import AgentHook
from covey.hooks.prompt import prompt_text, read_verdict
from covey.loop.execute import ToolExecutor
from covey.loop.gate import PermissionGate
from covey.loop.steps import ContinueTurn, CutOff, FinalOutput, RunTools, Stop, next_step
from covey.loop.wire import assistant_message
from covey.model.aliases import resolve_model
from covey.model.base import Model, ModelRequest
from covey.model.messages import ToolUseBlock
from covey.permissions.policy import PermissionPolicy
from covey.tools.base import ToolContext, ToolServices
from covey.tools.glob import Glob
from covey.tools.grep import Grep
from covey.tools.read import Read
from covey.tools.structured_output import STRUCTURED_OUTPUT, StructuredOutput

MAX_TURNS = 50
"""Claude Code's limit on an agent hook's turns."""
MAX_TOKENS = 4096
"""Room for one reply: a few tool calls or the verdict."""

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "description": "true when the condition is met, false when it is not"},
        "reason": {"type": "string", "description": "when ok is false: what is not met"},
    },
    "required": ["ok"],
    "additionalProperties": False,
}

SYSTEM = (
    "You verify a hook condition for a coding agent. The user message holds the condition and the event's "
    "data as JSON. Use the Read, Grep and Glob tools to look at the files in {cwd} as far as you need to "
    "decide, in as few steps as you can. Then give your verdict by calling the " + STRUCTURED_OUTPUT + " tool "
    'once: {{"ok": true}} when the condition is met, or {{"ok": false, "reason": "<what is not met>"}} when it is not.'
)


@dataclass(frozen=True)
class _PolicyOnly:
    """What Grep and Glob read of an agent's spec: the policy whose Read deny rules they honour."""

    permissions: PermissionPolicy


def verifier_policy(policy: Any, *, project_dir: Path, cwd: Path) -> PermissionPolicy:
    """The agent's policy (``policy``), or the working directories' alone when it has none, with
    nobody to ask: a call that would need a person (a read outside the working directories) is denied."""
    if isinstance(policy, PermissionPolicy):
        return policy.for_child(definition_mode="dontAsk", asker=None, cwd=cwd)
    return PermissionPolicy(mode="dontAsk", project_root=project_dir, cwd=cwd)


class Verifier:
    """One agent hook's run: a plain class (no actor), driven by ``run()``."""

    def __init__(
        self, hook: AgentHook, payload: dict[str, Any], model: Model, *, cwd: Path, policy: PermissionPolicy,
        env: Mapping[str, str] | None = None, max_turns: int = MAX_TURNS,
    ) -> None:
        self.hook, self.payload, self.model, self.max_turns = hook, payload, model, max_turns
        self.event = str(payload.get("hook_event_name", ""))
        self.answer = StructuredOutput(VERDICT_SCHEMA)
        self.tools = [Read(), Grep(), Glob(), self.answer]
        ctx = ToolContext(agent_id=f"{payload.get('agent_id') or 'main'}:agent-hook", cwd=cwd,
                          env=dict(env) if env is not None else None, services=ToolServices(spec=_PolicyOnly(policy)))
        self.executor = ToolExecutor(self.tools, ctx, gate=PermissionGate(policy))
        self.request = ModelRequest(
            model=resolve_model(hook.model or "haiku", env=env), max_tokens=MAX_TOKENS,
            system=[{"type": "text", "text": SYSTEM.format(cwd=cwd)}], tools=[tool.schema() for tool in self.tools],
            agent_id=payload.get("agent_id"),
        )
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": prompt_text(hook, payload)}]

    async def run(self) -> HookAnswer:
        """Turns until a verdict: a ``StructuredOutput`` call that validates, or a final text."""
        for _ in range(self.max_turns):
            reply = await self.model.create(self.request.model_copy(update={"messages": list(self.messages)}))
            self.messages.append(assistant_message(reply))
            match next_step(reply):
                case RunTools(calls):
                    if (answer := await self._run_tools(calls)) is not None:
                        return answer
                case ContinueTurn():
                    continue
                case FinalOutput(text):
                    return self._verdict(text)
                case CutOff():
                    return self._failed("its reply was cut off at max_tokens")
                case Stop(reason):
                    return self._failed(reason)
        return self._failed(f"it gave no verdict within {self.max_turns} turns")

    async def _run_tools(self, calls: Sequence[ToolUseBlock]) -> HookAnswer | None:
        """Run the calls; the verdict once a ``StructuredOutput`` call validated (or its tries are used up)."""
        results: dict[str, dict[str, Any]] = {}
        await self.executor.run_all(calls, results)
        self.messages.append({"role": "user", "content": [results[call.id] for call in calls]})
        if self.answer.answer is not None:
            return self._verdict(json.dumps(self.answer.answer))
        if self.answer.exhausted():
            return self._failed(self.answer.gave_up())
        return None

    def _verdict(self, text: str) -> HookAnswer:
        return read_verdict(self.hook.command, self.event, text, kind="agent")

    def _failed(self, why: str) -> HookAnswer:
        return HookAnswer(self.hook.command, error=f"the verifier gave no verdict: {why}")


def verifier(
    model: Model, policy: Any, *, project_dir: Path, env: Mapping[str, str] | None = None,
) -> Verify:
    """What runs an agent's ``agent`` hooks (``HookDispatch.verify``): a :class:`Verifier` per hook,
    through ``model``, confined by ``policy`` (the agent's, or None: the working directories)."""

    async def verify(hook: AgentHook, payload: dict[str, Any], cwd: Path) -> HookAnswer:
        checks = verifier_policy(policy, project_dir=project_dir, cwd=cwd)
        return await Verifier(hook, payload, model, cwd=cwd, policy=checks, env=env).run()

    return verify
