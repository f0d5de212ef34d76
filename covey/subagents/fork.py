"""Fork children (docs/subagents.md#fork-children): a copy of the parent that carries out one directive.

An ``Agent`` call without ``subagent_type`` forks while forking is on. The fork starts
from its parent's last request as it was sent — the same system prompt bytes, the same
tools array, the same history minus tool calls still waiting for their results — so
that sibling forks send one byte-identical prefix and the prompt cache serves all but
the first (docs/subagents.md#caching). Only the directive after that prefix differs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from covey.common.flags import truthy
from covey.definitions.coordinator import coordinator_mode
from covey.definitions.definition import AgentDefinition
from covey.definitions.spawn_types import spawnable_types
from covey.observe.otel import traceparent
from covey.runtime.spec import AgentSpec
from covey.runtime.worktree import Worktree
from covey.tools.services import CacheSafe

FORK_TYPE = "fork"
FORK_QUERY_SOURCE = "agent:builtin:fork"
"""A fork's query source: the first of the two recursion guards (the second scans its history)."""
FORK_TAG = "fork-boilerplate"
FORK_REFUSAL = "Fork is not available inside a forked worker. Do the work yourself, or name a subagent_type."
FORK_ENV = ("COVEY_FORK_SUBAGENT", "CLAUDE_CODE_FORK_SUBAGENT")
"""The switches, covey's and Claude Code's (an experimental variable of Claude Code 2.1.117+)."""

FORK_AGENT = AgentDefinition(
    name=FORK_TYPE,
    description="A copy of the calling agent that carries out one directive in the background.",
    tools=["*"], model="inherit", permission_mode="bubble", max_turns=200, background=True,
)
"""The synthetic definition a fork runs under; its prompt is its parent's (``system`` in the spec)."""

_BOILERPLATE = f"""<{FORK_TAG}>
You are a fork: a copy of the agent whose conversation is above, started to carry out the \
one directive below while that agent goes on with other work. What it knew, you know; \
treat the conversation as your reference, not as a list of things to do.
- Do the directive and nothing else. Other forks may be working on other parts.
- You cannot fork again; other tools, and sub-agents of a named type, are yours to use.
- Permission prompts still reach the person; do not ask them questions of your own.
- End with a short report (what you did, what you found, paths of files you changed, \
what is left): it is all your parent will read.
</{FORK_TAG}>"""


@dataclass
class CacheSafeParams:
    """An agent's last request as it was sent, cache breakpoints included: what a fork starts from."""

    system: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    thinking: dict[str, Any] | None = None
    read_files: dict[str, float] = field(default_factory=dict)


def fork_enabled(env: Mapping[str, str], setting: bool | None = None, settings_env: Mapping[str, str] | None = None) -> bool:
    """Settings' ``forkSubagent`` if set, else either switch in the run's env or settings' ``env``;
    never in coordinator mode."""
    sources = [env, settings_env or {}]
    if any(coordinator_mode(source) for source in sources):  # coordinator mode owns delegation
        return False
    if setting is not None:
        return setting
    return any(truthy(source.get(name)) for source in sources for name in FORK_ENV)


def in_fork_child(spec: Any, messages: list[dict[str, Any]]) -> bool:
    """Both guards: the agent's query source, and (in case it was lost) a user message of its
    history that opens with the boilerplate (a report quoting the tag further in is not one)."""
    if getattr(spec, "query_source", None) == FORK_QUERY_SOURCE:
        return True
    marker = f"<{FORK_TAG}>"
    return any(text.startswith(marker) for message in messages if message.get("role") == "user"
               for text in _texts(message))


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [block.get("text", "") for block in content or [] if block.get("type") == "text"]


def without_incomplete_tool_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy without the tool_use blocks that have no tool_result (calls still running, the
    fork's own among them); an assistant message left with nothing is dropped."""
    answered = {block.get("tool_use_id") for message in messages for block in _blocks(message)
                if block.get("type") == "tool_result"}
    kept = []
    for message in messages:
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            blocks = [b for b in message["content"] if b.get("type") != "tool_use" or b.get("id") in answered]
            if not blocks:
                continue
            message = {**message, "content": blocks}
        kept.append(copy.deepcopy(message))
    return kept


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def fork_directive(prompt: str, worktree: Worktree | None = None, parent_cwd: str = "") -> str:
    """The fork's first own message: the boilerplate, a worktree notice if any, its one task."""
    notice = ""
    if worktree is not None:
        notice = (f"\n\nYou work in a git worktree at {worktree.cwd}: paths under {parent_cwd} in the "
                  f"conversation above are the same files under {worktree.cwd}; change them there.")
    return f"{_BOILERPLATE}{notice}\n\nYour directive: {prompt}"


def fork_spec(
    parent: AgentSpec, params: CacheSafe, call: Any, *, agent_id: str, tool_use_id: str | None,
    worktree: Worktree | None = None,
) -> AgentSpec:
    """The fork's spec: its parent's prompt bytes, tools array, model, effort and thinking; the
    history it inherits; ``bubble`` permissions; always in the background."""
    runtime = parent.runtime
    cwd = str(Path(worktree.cwd if worktree is not None else getattr(call, "cwd", None) or parent.cwd))
    root = Path(worktree.path) if worktree is not None else None
    permissions = parent.permissions.for_child(definition_mode="bubble", cwd=Path(cwd), project_root=root) \
        if parent.permissions else None
    can_ask = bool(runtime is not None and runtime.can_ask)
    return AgentSpec(
        session_id=parent.session_id, agent_id=agent_id, definition=_fork_definition(parent),
        prompt=fork_directive(call.prompt, worktree, parent.cwd),
        model=parent.model, model_id=parent.model_id, effort=parent.effort, thinking=params.thinking,
        cwd=cwd, system=params.system, exact_tools=params.tools, tool_names=list(parent.tool_names),
        inherited=without_incomplete_tool_calls(params.messages), read_files=dict(params.read_files),
        permissions=permissions, max_turns=FORK_AGENT.max_turns or 200, depth=parent.depth + 1,
        parent_agent_id=parent.agent_id, tool_use_id=tool_use_id, traceparent=traceparent(),
        description=call.description, background=True, worktree=worktree, transcript_dir=parent.transcript_dir, runtime=runtime,
        settings=parent.settings.model_copy(update={"can_ask": can_ask}), query_source=FORK_QUERY_SOURCE,
    )


def _fork_definition(parent: AgentSpec) -> AgentDefinition:
    """``FORK_AGENT``; a fork of an agent limited to some types (``Agent(Explore)`` in its tools) keeps
    the limit: its tools list is its parent's (its tool names are its parent's anyway)."""
    if spawnable_types(parent.definition.tools) is None:
        return FORK_AGENT
    return FORK_AGENT.model_copy(update={"tools": list(parent.definition.tools)})
