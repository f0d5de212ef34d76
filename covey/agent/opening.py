"""An agent run's opening messages: the first run's prelude, preloaded skills, hooks' context and
prompt, a conversation's next turn, or a resumed history; the hooks that run on the way
(SessionStart, SubagentStart, UserPromptSubmit), and a prompt one of them stopped."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from covey.agent.hook_wiring import fire_instructions_loaded
from covey.definitions.mentions import mention_blocks
from covey.definitions.skill_loader import preload_skills
from covey.errors import PromptBlocked
from covey.events import ResultEvent
from covey.hooks.runner import HookRegistry
from covey.loop.steps import settled
from covey.runtime.spec import AgentSpec

OnStart = Callable[[list[dict[str, Any]], "frozenset[int] | None"], Awaitable[None]]
"""Records a turn's opening messages in the transcript: ``(messages, typed)``, ``typed`` the
indexes of what the person typed (the prompt, a slash command), None for just the last; the
rest is meta (``isMeta``), which the SDK's session readers skip."""

CLEARED = [
    {"role": "user", "content": "<local-command-caveat>The command below was run directly in Claude Code, not sent "
                                "to you as a request, and its output goes straight to the user. It's recorded here "
                                "as context for later messages.</local-command-caveat>\n"},
    {"role": "user", "content": "<command-name>/clear</command-name>\n            <command-message>clear"
                                "</command-message>\n            <command-args></command-args>\n"},
    {"role": "user", "content": "<local-command-stdout></local-command-stdout>\n"},
]
"""What a session that ``/clear`` started begins with, as Claude Code records the command: its
caveat and output are meta, the command is what the person typed."""


class PromptStopped(Exception):
    """A UserPromptSubmit hook answered ``"continue": false``: the turn ends before any request."""


async def opening(spec: AgentSpec, hooks: HookRegistry, on_start: OnStart | None) -> list[dict[str, Any]]:
    """The messages the run starts from; those new to its transcript go to ``on_start`` first."""
    if spec.history and spec.next_prompt is not None:
        context = await _session_start(spec, hooks, spec.session_source) if spec.session_source else []
        return [*settled(spec.history), *await _prompted(spec, hooks, on_start, context, spec.next_prompt)]
    if spec.history:
        if spec.depth > 0:  # a resumed sub-agent: its launch context is in its history already
            await hooks.run_subagent_start(spec.agent_id, spec.definition.name, cwd=spec.cwd)
        return spec.history
    skills = spec.runtime.skills if spec.runtime is not None else {}
    preloaded = await preload_skills(spec.definition.skills, skills) if spec.definition.skills else []
    before = [*(spec.inherited or []), *spec.prelude, *preloaded]
    if spec.depth == 0:
        cleared = CLEARED if spec.session_source == "clear" else []
        command = frozenset({len(before) + 1} if cleared else ())  # /clear itself: typed, as the prompt is
        await fire_instructions_loaded(hooks, spec, spec.prelude, "session_start")
        context = await _session_start(spec, hooks, spec.session_source or "startup")
        return await _prompted(spec, hooks, on_start, [*before, *cleared, *context], spec.prompt, command)
    outcome = await hooks.run_subagent_start(spec.agent_id, spec.definition.name, cwd=spec.cwd)
    messages = [*before, *_reminder("SubagentStart", outcome.additional_context), {"role": "user", "content": spec.prompt}]
    if on_start is not None:
        await on_start(messages, None)
    return messages


async def _prompted(spec: AgentSpec, hooks: HookRegistry, on_start: OnStart | None, before: list[dict[str, Any]],
                    prompt: str, typed_before: frozenset[int] = frozenset()) -> list[dict[str, Any]]:
    """``before``, then ``prompt`` as its UserPromptSubmit hooks leave it, recorded. A prompt they
    stopped is recorded with their words, as Claude Code records it (the next turn's request
    carries both), and ``PromptStopped`` raised. ``typed_before``: what of ``before`` the person typed."""
    typed = frozenset({len(before), *typed_before})
    try:
        submitted = await _submitted(prompt, spec, hooks)
        content = [*mention_blocks(spec.mentions), {"type": "text", "text": submitted}] if spec.mentions else submitted
        messages = [*before, {"role": "user", "content": content}]
    except PromptStopped as stopped:
        if on_start is not None:
            await on_start([*before, {"role": "user", "content": prompt}, _stopped_note(str(stopped))], typed)
        raise
    if on_start is not None:
        await on_start(messages, typed)
    return messages


def _stopped_note(reason: str) -> dict[str, Any]:
    text = ("<system-reminder>\nThe text below is the output of a hook, not a message from the user.\n"
            f"Operation stopped by hook: {reason}\n</system-reminder>\n")
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def stopped_result(spec: AgentSpec, reason: str) -> ResultEvent:
    """The turn's result when a UserPromptSubmit hook stopped it, as Claude Code ends it: a success
    that says so, with no request made."""
    text = f"Operation stopped by hook: {reason}"
    return ResultEvent(session_id=spec.session_id, agent_id=spec.agent_id, subtype="success", is_error=False,
                       result=text, num_turns=0, duration_ms=0, duration_api_ms=0, total_cost_usd=0.0, usage={})


async def _session_start(spec: AgentSpec, hooks: HookRegistry, source: str) -> list[dict[str, Any]]:
    """SessionStart hooks (matched on ``source``): what they say goes before the first prompt."""
    outcome = await hooks.run_session_start(source=source, cwd=spec.cwd, model=spec.model_id)
    return _reminder("SessionStart", outcome.additional_context)


def _reminder(event: str, context: str | None) -> list[dict[str, Any]]:
    """A hook's context as Claude Code puts it in front of the model: a system reminder naming the event."""
    if not context:
        return []
    text = f"<system-reminder>\n{event} hook additional context: {context}\n</system-reminder>"
    return [{"role": "user", "content": [{"type": "text", "text": text}]}]


async def _submitted(prompt: str, spec: AgentSpec, hooks: HookRegistry) -> str:
    """``prompt`` past the UserPromptSubmit hooks: stopped (``PromptStopped``), blocked
    (``PromptBlocked``), or with their context."""
    outcome = await hooks.run_user_prompt_submit(prompt, agent_id=spec.agent_id, cwd=spec.cwd)
    if outcome.stop:
        raise PromptStopped(outcome.stop_reason or "a UserPromptSubmit hook stopped it")
    if outcome.blocked:
        raise PromptBlocked(outcome.reason or "a UserPromptSubmit hook blocked the prompt")
    # What background hooks said since the last turn comes with this prompt.
    for context in filter(None, (outcome.additional_context, hooks.background.take())):
        prompt = f"{prompt}\n\n<system-reminder>\n{context}\n</system-reminder>"
    return prompt
