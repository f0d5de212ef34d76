"""``AgentSpec``: everything an agent run needs, resolved before it starts.

It is plain, picklable data: the driver or a parent builds it, a Ray actor
receives it, and ``run_agent`` turns it into a running agent.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from covey.definitions.definition import AgentDefinition
from covey.runtime.worktree import Worktree


class RunSettings(BaseModel):
    """What a run takes from the session's settings files; a child inherits its parent's."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, arbitrary_types_allowed=True)

    model_prices: dict[str, Any] | None = Field(default=None, alias="modelPrices")
    """Price overrides per model (settings' ``modelPrices``)."""
    model_limits: dict[str, Any] | None = Field(default=None, alias="modelLimits")
    """Token limit overrides per model (settings' ``modelLimits``)."""
    rate_limits: dict[str, float] | None = Field(default=None, alias="rateLimits")
    """Rate limits set by hand (settings' ``rateLimits``), read with ``COVEY_RATE_LIMIT_*`` on top."""
    auto_compact: bool = True
    """Compact the conversation when it nears the model's window (settings' ``autoCompactEnabled``)."""
    can_ask: bool = False
    """Whether this agent's permission prompts reach a person (docs/definitions.md#permissions: else it denies)."""
    hooks: Any = None
    """The settings files' hooks (a ``HookConfig``), run for every agent of the session."""
    project_dir: str | None = None
    """The session's project root, as hooks see it (``CLAUDE_PROJECT_DIR``)."""
    trusted_project: bool = True
    """Whether the person trusts the project folder (covey/trust/): if not, a memory folder its files
    make a link is not used (docs/permissions.md#trust)."""
    session_transcript: str | None = None
    """The main agent's transcript: every hook payload's ``transcript_path``, in sub-agents too
    (theirs is ``agent_transcript_path``), as in Claude Code. None: the agent's own."""
    partial_messages: bool = False
    """The main agent's replies also stream as raw stream events (``--include-partial-messages``)."""
    mcp_servers: dict[str, Any] = Field(default_factory=dict)
    """The session's MCP servers by name (``McpServerConfig``): every agent's, shared (docs/mcp.md)."""
    env: dict[str, str] | None = None
    """The run's environment: what Bash, Grep's ``rg`` and command hooks run with, and where the
    agent reads ``COVEY_*`` switches and model aliases. None: the agent actor's own environment."""
    betas: list[str] = Field(default_factory=list)
    """Beta headers every request of the session carries (``--betas``)."""
    hook_events: bool = False
    """The main agent's hook runs go into its events (``--include-hook-events``)."""
    session_mirror: bool = False
    """Each transcript record also goes out as a ``transcript_mirror`` event (``--session-mirror``)."""
    progress_summary_ms: int | None = None
    """The interval of a sub-agent's progress summaries (``agentProgressSummaries``,
    docs/subagents.md#progress-summaries); None: off."""
    otel: dict[str, str] | None = None
    """The ``OTEL_*`` variables of a run that asked for OpenTelemetry traces (``covey.observe.otel``):
    every agent's process exports with them, on any node. None: no spans, nothing imported."""
    bypass_disabled: bool = False
    """Settings' ``disableBypassPermissionsMode``: no agent of the session may run in bypassPermissions
    (an Agent call's ``mode``, a definition's, a hook's or an answer's ``setMode``)."""


class TeamSeat(BaseModel):
    """A teammate's place in its team: the team's name and actor handles, and its own name."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    """The team's name."""
    member: str
    """The teammate's name in the team (what SendMessage and the task board call it)."""
    roster: Any
    """The team's roster actor handle."""
    board: Any
    """The team's task board actor handle."""


class AgentSpec(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    session_id: str
    agent_id: str
    definition: AgentDefinition
    prompt: str
    """The task: the first user message."""
    model: Any = None
    """Where replies come from: ``scripted:PATH``, ``anthropic``/None, or a picklable Model."""
    model_id: str
    """The resolved model id requests name."""
    effort: str | int | None = None
    """Reasoning effort: the call's, else the definition's, else the parent's (docs/definitions.md#effort)."""
    cwd: str
    system: list[dict[str, Any]] = Field(default_factory=list)
    """The rendered system prompt blocks (a fork reuses its parent's bytes)."""
    prelude: list[dict[str, Any]] = Field(default_factory=list)
    """Messages placed before the prompt (agent list, skills, project context)."""
    tool_names: list[str] = Field(default_factory=list)
    """The agent's resolved tool pool, by name."""
    permissions: Any = None
    """The agent's PermissionPolicy (an overlay of its parent's)."""
    max_turns: int = 100
    depth: int = 0
    """Spawn depth: 0 for the main agent, parent's + 1 for a child."""
    parent_agent_id: str | None = None
    tool_use_id: str | None = None
    """The parent's Agent tool_use that launched it."""
    traceparent: str | None = None
    """The W3C ``traceparent`` of the parent's Agent call (docs/observability.md): its ``invoke_agent`` span's parent."""
    run_id: str | None = None
    """This run's ``run_id`` in its task events (``task_started`` and on: Claude Code's)."""
    description: str = ""
    background: bool = False
    transcript_dir: str | None = None
    """The session's project folder its transcripts go in (``<config>/projects/<project>``:
    ``covey.transcripts.session_files``). None: the agent's cwd's, in the user's config dir."""
    team: TeamSeat | None = None
    """For a teammate: its place in its team."""
    history: list[dict[str, Any]] | None = None
    """A resumed agent's conversation, rebuilt from its transcript (replaces prelude and prompt)."""
    next_prompt: str | None = None
    """The main agent's next turn in a conversation: the user message after ``history``
    (it goes through UserPromptSubmit hooks and into the transcript like a first prompt)."""
    mentions: list[dict[str, Any]] = Field(default_factory=list)
    """The files this turn's prompt names with ``@`` (``covey.definitions.mentions``): read before it, recorded after it."""
    session_source: str | None = None
    """The main agent's SessionStart source for this run: ``resume`` / ``fork`` for a resumed
    session's first turn; None: ``startup`` for a fresh run, no SessionStart for a later turn."""
    worktree: Worktree | None = None
    """The git worktree this agent works in (isolation: worktree), removed or kept at its end."""
    thinking: dict[str, Any] | None = None
    """Extended thinking for its requests: none for children; a fork's is its parent's (same request bytes)."""
    task_budget: int | None = None
    """The main agent's task budget in tokens (``--task-budget``); none for children."""
    compact_request: str | None = None
    """This turn is the ``/compact`` command: the main agent's conversation is summarised with
    these instructions ("" for none) and nothing else is asked (docs/compaction.md)."""
    output_schema: dict[str, Any] | None = None
    """The main agent's final answer's JSON Schema (``--json-schema``): it answers through the
    ``StructuredOutput`` tool (docs/cli.md#structured-output); none for children."""
    exact_tools: list[dict[str, Any]] | None = None
    """A fork's tools array, its parent's byte for byte (sent as is; ``tool_names`` still runs them)."""
    inherited: list[dict[str, Any]] | None = None
    """A fork's copy of its parent's history, placed before its prompt; its end is a cache breakpoint."""
    read_files: dict[str, float] = Field(default_factory=dict)
    """The read-file cache it starts with: a fork's is a copy of its parent's, a fresh agent's empty."""
    query_source: str | None = None
    """Who is asking (``agent:builtin:fork`` for a fork): the fork guard reads it."""
    runtime: Any = None
    """The session's actors (a SessionRuntime); None for an agent run outside a session."""
    settings: RunSettings = Field(default_factory=RunSettings)
