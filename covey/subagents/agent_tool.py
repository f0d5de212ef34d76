"""The ``Agent`` tool: its schema and description, and the routing of a call before any agent exists.

Routing (docs/subagents.md#the-call) happens here: teammates and remote isolation where they are
available, the types the caller's definition lets it launch, no fork inside a fork, a person's
approval for a child more powerful than its parent.
The launch itself (covey/subagents/launch.py) reserves a slot through the registry, which runs
the launch checks atomically (docs/subagents.md#limits-the-registry-actor).
"""

from __future__ import annotations

from typing import Any, ClassVar

from covey.definitions.spawn_types import type_refusal
from covey.errors import CoveyError
from covey.mcp import required_servers_problem
from covey.permissions.decisions import Deny
from covey.subagents.agent_schema import agent_input_model
from covey.subagents.escalation import launch_escalation, refused_text
from covey.subagents.fork import FORK_AGENT, FORK_REFUSAL, FORK_TYPE, in_fork_child
from covey.subagents.launch import Launch, default_agent_type
from covey.tools.base import Tool, ToolContext, ToolResult

DESCRIPTION = """Launch a sub-agent to handle a task on its own: it gets its own conversation, tools \
and model, sees none of your conversation, and reports back when done. Give it a complete, \
self-contained prompt. Use several in one message to run independent tasks in parallel. \
With run_in_background the call returns at once and the result arrives later as a \
<task-notification>; without it, the agent's report is the result of this call. The agent \
types you can choose from are listed in a separate message."""

DESCRIPTION_FORKING = """Launch an agent to work on a task in the background: the call returns at \
once and the agent's report arrives later as a <task-notification>; do not guess it, and do \
not read the agent's output file to get it. Use several in one message to run independent \
tasks in parallel. With a subagent_type you get an agent of that type: its own conversation, \
tools and model; it sees none of your conversation, so give it a complete, self-contained \
prompt. The agent types you can choose from are listed in a separate message.

Without a subagent_type the agent is a fork of you: it starts from this conversation (your \
instructions, your tools, the files you have read), so its prompt is a short directive. Fork \
when a piece of work needs what you already know and would fill your context with output you \
need not keep: a search, a test run, an investigation, one part of a change. Give each fork \
one directive. Forks launched in one message run in parallel and share your prompt cache, \
so they cost little. Choose a subagent_type instead when the task wants a fresh view or a \
specialist. A fork cannot fork again."""


class AgentTool(Tool):
    name = "Agent"
    description = DESCRIPTION
    # Claude Code schedules the launcher as read-only: spawning is not a file change,
    # and every call of the child passes its own permission checks.
    read_only = True
    result_as_blocks: ClassVar[bool] = True
    """Claude Code sends the Agent tool's tool_result content as a list of text blocks."""
    heartbeat_s: ClassVar[float | None] = 30.0
    """A ``tool_progress`` heartbeat every 30 s of a call, as Claude Code's."""

    def __init__(self, *, background: bool = True, teams: bool = False, remote: bool = False,
                 fork: bool = False) -> None:
        self.background_allowed = background
        self.fork = fork
        self.input_model = agent_input_model(background=background, teams=teams, remote=remote, fork=fork)
        if fork:  # static per configuration, like the schema: the cached prefix must not move
            self.description = DESCRIPTION_FORKING

    def permission_subject(self, input: Any, ctx: ToolContext | None = None) -> str | None:
        runtime = ctx.services.runtime if ctx is not None else None
        return input.subagent_type or (FORK_TYPE if self.fork else default_agent_type(runtime))

    def tool_use_result(self, result: ToolResult) -> Any:
        """Claude Code's structured result of the call: the launch or the sync child's end."""
        wire = getattr(result.data, "wire", None)
        return wire() if wire is not None else None

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        runtime, parent = ctx.services.runtime, ctx.services.spec
        if runtime is None or parent is None:
            return ToolResult.error("The Agent tool needs a covey session (no registry is reachable from here).")
        forking = self.fork and not input.subagent_type and not _names_teammate(input)
        if routed := _unavailable_route(input, runtime) or _type_refused(input, parent, runtime, forking):
            return ToolResult.error(routed)
        if forking and (refused := _fork_refused(parent, ctx)):
            return ToolResult.error(refused)
        if not forking and (refused := await _servers_refused(input, parent, runtime)):
            return ToolResult.error(refused)
        if refused := await _escalation_refused(self, input, ctx, parent, runtime, forking):
            return ToolResult.error(refused)
        try:
            return await Launch(input, ctx, parent, runtime, fork=forking).go()
        except CoveyError as exc:
            return ToolResult.error(str(exc))


async def _escalation_refused(tool: Tool, input: Any, ctx: ToolContext, parent: Any, runtime: Any, forking: bool) -> str | None:
    """A child more powerful than its parent starts only with a person's approval (covey/subagents/escalation.py)."""
    agent_type = FORK_TYPE if forking else input.subagent_type or default_agent_type(runtime)
    definition = FORK_AGENT if forking else runtime.definitions.get(agent_type)
    ask = launch_escalation(parent, definition, input, agent_type)
    if ask is None:
        return None
    if ctx.services.confirm is None:
        return refused_text(ask, "Nobody can be asked here, so it was denied.")
    decision = await ctx.services.confirm(tool, input, ctx, ask)
    return refused_text(ask, decision.message) if isinstance(decision, Deny) else None


async def _servers_refused(input: Any, parent: Any, runtime: Any) -> str | None:
    """Route 5 (docs/mcp.md): the MCP servers the definition requires, waited for in the caller's
    process before any child exists; a server that is missing or failed refuses the launch."""
    agent_type = input.subagent_type or default_agent_type(runtime)
    definition = runtime.definitions.get(agent_type)
    problem = await required_servers_problem(parent, definition) if definition is not None else None
    if problem is None:
        return None
    return (f"Agent type {agent_type!r} was not launched: its definition requires MCP servers, and {problem}. "
            "Nothing was started. Do the work without this agent, or tell the user to fix the server.")


def _names_teammate(input: Any) -> bool:
    return bool(getattr(input, "name", None) and getattr(input, "team_name", None))


def _fork_refused(parent: Any, ctx: ToolContext) -> str | None:
    """Route 3's guard (docs/subagents.md#fork-children): no fork inside a fork, checked by the
    caller's query source and, should that have been lost, by the boilerplate in its history."""
    if ctx.services.cache_safe is None:
        return "Forking needs the calling agent's conversation, which is not available here."
    if in_fork_child(parent, ctx.services.cache_safe().messages):
        return FORK_REFUSAL
    return None


def _type_refused(input: Any, parent: Any, runtime: Any, forking: bool) -> str | None:
    """The caller's definition may limit the types it launches (``Agent(Explore)`` in its tools);
    a fork is a copy of the caller, not a type, and is not limited."""
    if forking:
        return None
    agent_type = input.subagent_type or default_agent_type(runtime)
    if refused := type_refusal(parent.definition, agent_type, named=bool(input.subagent_type)):
        return refused
    definition = runtime.definitions.get(agent_type)
    # The call's own isolation wins over its definition's, as when the child is launched.
    if definition is not None and definition.isolation == "remote" and input.isolation is None:
        return _remote_refusal(definition)
    return None


def _remote_refusal(definition: Any) -> str:
    where = f" ({definition.path})" if definition.path else ""
    return (f"Agent type {definition.name!r} cannot be launched: its definition{where} sets isolation: remote, "
            "and covey has no remote backend to run it on. Use another agent type, or tell the user this "
            "definition runs in covey only without isolation: remote (or with isolation: worktree).")


def _unavailable_route(input: Any, runtime: Any) -> str | None:
    if _names_teammate(input) and not runtime.teams:
        return "Teammates are not available in this session (teams are not enabled)."
    if input.isolation == "remote":
        return "Remote isolation is not available: no remote backend is configured."
    return None
