"""Building a child's ``AgentSpec`` from its parent's spec, its definition and the call (docs/definitions.md#your-own-definitions, docs/definitions.md#permissions).

Everything here is resolved before the child exists; the lifecycle then runs
the spec without knowing how it was chosen.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Mapping

from covey.definitions.context import agent_list_message
from covey.definitions.definition import AgentDefinition
from covey.definitions.memory import linked_below, memory_dir, memory_prompt
from covey.definitions.resolve import child_effort, resolve_agent_model, resolve_tools
from covey.definitions.skill_listing import skill_list_message
from covey.definitions.spawn_types import listed
from covey.definitions.system_prompt import system_blocks
from covey.errors import ModelBehaviorError
from covey.observe.otel import traceparent
from covey.runtime.spec import AgentSpec
from covey.runtime.worktree import Worktree

DEFAULT_CHILD_MAX_TURNS = 100
FALLBACK_PROMPT = "You are a sub-agent. Complete the task you are given fully, then report what you found and did."


async def child_spec(
    parent: AgentSpec,
    definition: AgentDefinition,
    call: Any,
    *,
    agent_id: str,
    tool_use_id: str | None,
    background: bool,
    available_tools: list[str],
    cwd: str | None = None,
    worktree: Worktree | None = None,
) -> AgentSpec:
    runtime = parent.runtime
    env = parent.settings.env
    model_id = resolve_agent_model(call.model, definition, parent.model_id, env=env)
    depth = parent.depth + 1
    cwd = str(Path(cwd or call.cwd or parent.cwd))
    tools = resolve_tools(
        definition, available_tools, depth=depth, max_depth=runtime.limits.max_depth, background=background,
    )
    prelude = await _prelude(runtime, definition, tools, cwd, env)
    mode = _child_mode(parent, definition, call)
    memory = _memory(parent, definition)
    return AgentSpec(
        session_id=parent.session_id,
        agent_id=agent_id,
        definition=definition,
        prompt=call.prompt,
        model=parent.model,
        model_id=model_id,
        effort=child_effort(getattr(call, "effort", None), definition, parent.effort),
        cwd=cwd,
        system=system_blocks(await _system_prompt(definition, memory), cwd, model_id),
        prelude=prelude,
        tool_names=tools,
        permissions=_permissions(parent, mode, cwd, worktree, memory),
        max_turns=definition.max_turns or DEFAULT_CHILD_MAX_TURNS,
        depth=depth,
        parent_agent_id=parent.agent_id,
        tool_use_id=tool_use_id,
        traceparent=traceparent(),  # this Agent call's span: the child's spans join the trace under it
        description=call.description,
        background=background,
        worktree=worktree,
        transcript_dir=parent.transcript_dir,
        runtime=runtime,
        # The parent's settings (its environment included) with the child's own can_ask.
        settings=parent.settings.model_copy(update={"can_ask": _can_ask(runtime, background, mode)}),
    )


async def _prelude(runtime: Any, definition: AgentDefinition, tools: list[str], cwd: str,
                   env: Mapping[str, str] | None) -> list[dict[str, Any]]:
    """What the child reads before its prompt: its project context, then the agent types it may
    launch and the skills it may load (as the main agent's listings), when it has those tools."""
    prelude = await runtime.context_for(cwd, omit=definition.omit_claude_md, env=env)
    if "Agent" in tools:  # only the types its definition lets it launch
        prelude = [*prelude, agent_list_message(listed(runtime.definitions, definition.tools))]
    listing = skill_list_message(runtime.skills) if "Skill" in tools else None
    if listing is not None:
        prelude = [*prelude, listing]
    return list(prelude)


def _permissions(parent: AgentSpec, mode: str | None, cwd: str, worktree: Worktree | None,
                 memory: Path | None) -> Any:
    """The parent's policy overlaid for the child; a worktree child's working directory is its
    worktree, not the main checkout (docs/definitions.md#permissions)."""
    if not parent.permissions:
        return parent.permissions
    root = Path(worktree.path) if worktree is not None else None
    return parent.permissions.for_child(definition_mode=mode, cwd=Path(cwd), project_root=root,
                                        memory_dirs=[memory] if memory else ())


def _memory(parent: AgentSpec, definition: AgentDefinition) -> Path | None:
    """The child's memory folder (docs/definitions.md#agent-memory); a project's is the session's
    project root, so a worktree child's notes outlive its worktree."""
    if definition.memory is None:
        return None
    project = Path(parent.settings.project_dir or parent.cwd)
    folder = memory_dir(definition.name, definition.memory, project=project, env=parent.settings.env)
    if definition.memory != "user" and not parent.settings.trusted_project and linked_below(folder, project):
        return None  # a link an untrusted repository ships could make "its memory" any folder of the disk
    return folder


async def _system_prompt(definition: AgentDefinition, memory: Path | None) -> str:
    """Its definition's prompt, then, with ``memory``, how to keep it and its ``MEMORY.md``."""
    prompt = definition.prompt or FALLBACK_PROMPT
    if memory is None or definition.memory is None:
        return prompt
    return f"{prompt}\n\n{await asyncio.to_thread(memory_prompt, definition.name, definition.memory, memory)}"


def _child_mode(parent: AgentSpec, definition: AgentDefinition, call: Any) -> str | None:
    """The mode the call (else the definition) asks for. Where settings disable bypassPermissions
    (``RunSettings.bypass_disabled``) the call's request is refused and the definition's falls back
    to ``default`` (docs/definitions.md#settings-that-cannot-be-turned-against-you)."""
    asked = getattr(call, "mode", None)  # the schema offers `mode` only with teams
    mode = asked or definition.permission_mode
    if mode != "bypassPermissions" or not parent.settings.bypass_disabled:
        return mode
    if asked == "bypassPermissions":
        raise ModelBehaviorError("mode 'bypassPermissions' is disabled in this session "
                                 "(disableBypassPermissionsMode); call Agent again with another mode, or none")
    return "default"


def _can_ask(runtime: Any, background: bool, mode: str | None) -> bool:
    """docs/definitions.md#permissions: an agent that cannot show a prompt denies, unless it bubbles up to the root."""
    if not runtime.can_ask:
        return False
    return mode == "bubble" or not background
