"""``AgentDefinition``: one validated model for an agent type, built-in or from a file."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from covey.common.frontmatter import MAX_DEFINITION_FILE_BYTES, MAX_DESCRIPTION_CHARS
from covey.model.effort import Effort
from covey.permissions.modes import PermissionMode
from covey.ray.resources import AgentResources

MAX_PROMPT_CHARS = MAX_DEFINITION_FILE_BYTES
"""A system prompt as long as the largest file allowed (``--agents`` and SDK definitions have no file)."""

Source = Literal["built-in", "plugin", "user", "project", "flag", "policy"]
"""Where a definition came from, lowest to highest priority."""


class AgentDefinition(BaseModel):
    """An agent type: its prompt, tools, model and behaviour. Frontmatter names are aliases."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    name: str
    """The type name the Agent tool's ``subagent_type`` selects."""
    description: str = Field("", max_length=MAX_DESCRIPTION_CHARS)
    """When to use this agent (shown to the parent model in the agent list)."""
    prompt: str = Field("", max_length=MAX_PROMPT_CHARS)
    """The system prompt (a markdown file's body)."""
    tools: list[str] = Field(default_factory=lambda: ["*"])
    """Tool names the agent may use; ``["*"]`` for all."""
    disallowed_tools: list[str] = Field(default_factory=list, alias="disallowedTools")
    model: str | None = None
    """Alias, model id, or ``inherit``; None inherits the parent's model, as ``inherit`` does."""
    permission_mode: PermissionMode | None = Field(default=None, alias="permissionMode")
    max_turns: int | None = Field(default=None, alias="maxTurns", gt=0)
    skills: list[str] = Field(default_factory=list)
    mcp_servers: list[Any] = Field(default_factory=list, alias="mcpServers")
    hooks: dict[str, Any] = Field(default_factory=dict)
    color: str | None = None
    background: bool = False
    """Always runs in the background (async), whatever the call says."""
    isolation: Literal["worktree", "remote"] | None = None
    """``worktree``: a temporary git worktree; ``remote`` is refused at launch (covey has no remote backend)."""
    memory: Literal["user", "project", "local"] | None = None
    """Persistent memory (docs/definitions.md#agent-memory): a folder of notes kept between runs."""
    initial_prompt: str | None = Field(default=None, alias="initialPrompt")
    """Claude Code's first user turn when the agent is the main agent (``--agent``); covey has no such
    path, so it is kept and a warning says it is unused."""
    effort: Effort | None = None
    """Reasoning effort while this agent runs (``low`` … ``max``); None: its parent's."""
    omit_claude_md: bool = Field(default=False, alias="omitClaudeMd")
    """No project-instructions file and no git-status snapshot in its context."""
    critical_system_reminder: str | None = Field(default=None, alias="criticalSystemReminder")
    """Text re-injected after every tool result (Verification's reminder)."""
    one_shot: bool = Field(default=False, alias="oneShot")
    """Its report skips the agent id / SendMessage trailer (Explore)."""
    resources: AgentResources | None = None
    """Ray resources its actor asks for (``{num_gpus: 1}``, ``{browser: 1}``, ``label_selector``):
    Ray places it on a node that has them, and queues it while none does (docs/definitions.md#resources)."""
    source: Source = "built-in"
    path: str | None = None
    """The file it was loaded from, if any."""
