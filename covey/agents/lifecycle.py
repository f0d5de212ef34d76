"""``run_agent``: the one lifecycle every agent kind flows through (SPEC 5).

It builds the agent's context and loop from an already-resolved ``AgentSpec``,
yields the agent's events as they happen, and releases everything the agent
touched in ``finally`` — on success, error and cancellation alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

from covey.agents.spec import AgentSpec
from covey.events import Event
from covey.loop import AgentLoop, LoopConfig, ToolExecutor
from covey.loop.gate import PermissionGate
from covey.model.base import Model
from covey.tools.catalog import tool_catalog
from covey.tools.base import Tool, ToolContext
from covey.tools.processes import ProcessTracker
from covey.tools.todo import clear_todos


@dataclass
class AgentServices:
    """Live collaborators of one agent run, built where it runs (not picklable)."""

    model: Model
    asker: Callable[[Any], Awaitable[Any]] | None = None
    inbox: Any = None
    extra_tools: list[Tool] = field(default_factory=list)
    cost_of: Callable[[str, Any], float] | None = None
    on_event: Callable[[Event], Awaitable[None]] | None = None
    """Sees every event before it is yielded."""
    emit: Callable[[Event], None] | None = None
    """Where tools send events of their own (a child's progress, task_started)."""
    runtime: dict[str, Any] = field(default_factory=dict)
    """Handles tools may need (registry, pool, launcher), put into ToolContext.services."""


def available_tools(spec: AgentSpec, services: AgentServices) -> list[Tool]:
    """The spec's tool pool as Tool objects, in a stable order."""
    wanted = set(spec.tool_names)
    options = spec.runtime.options if spec.runtime is not None else {}
    return [tool for tool in [*tool_catalog(options), *services.extra_tools] if tool.name in wanted]


async def run_agent(spec: AgentSpec, services: AgentServices) -> AsyncIterator[Event]:
    ctx = ToolContext(
        agent_id=spec.agent_id,
        cwd=Path(spec.cwd),
        processes=ProcessTracker(),
        services={**services.runtime, "spec": spec},
        emit=services.emit,
    )
    loop = _build_loop(spec, services, ctx)
    messages = [*spec.prelude, {"role": "user", "content": spec.prompt}]
    try:
        async for event in loop.run(messages):
            if services.on_event is not None:
                await services.on_event(event)
            yield event
    finally:
        await release(ctx)


def _build_loop(spec: AgentSpec, services: AgentServices, ctx: ToolContext) -> AgentLoop:
    gate = PermissionGate(spec.permissions, services.asker) if spec.permissions is not None else None
    executor = ToolExecutor(available_tools(spec, services), ctx, gate=gate)
    loop = AgentLoop(
        model=services.model,
        config=LoopConfig(model_id=spec.model_id, system=spec.system, max_turns=spec.max_turns),
        executor=executor,
        session_id=spec.session_id,
        agent_id=spec.agent_id,
        cost_of=services.cost_of,
        inbox=services.inbox,
        parent_tool_use_id=spec.tool_use_id,
    )
    if gate is not None:
        gate.denials = loop.denials
    return loop


async def release(ctx: ToolContext) -> None:
    """Step 15: free what the agent touched. Idempotent."""
    if ctx.processes is not None:
        await ctx.processes.kill_all()
    ctx.read_files.clear()
    clear_todos(ctx)
