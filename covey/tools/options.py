"""``ToolOptions``: the session-wide switches that shape the tool catalog and the Agent tool's schema."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

BACKGROUND_DISABLED_ENV = ("COVEY_DISABLE_BACKGROUND_TASKS", "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS")
"""covey's name first: where both are set, it decides (covey/common/flags.py)."""


class ToolOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    background_disabled: bool = False
    """``COVEY_DISABLE_BACKGROUND_TASKS`` (else Claude Code's ``CLAUDE_CODE_DISABLE_BACKGROUND_TASKS``):
    the Agent tool's schema has no ``run_in_background``."""
    teams: bool = False
    """Team tools (TeamCreate, SendMessage, Task*) and the Agent tool's ``name``/``team_name``."""
    fork: bool = False
    """Forking is on (docs/subagents.md#fork-children): an Agent call without ``subagent_type`` forks,
    and ``run_in_background`` leaves the schema (every fork runs in the background)."""
    remote: bool = False
    """A remote backend is configured: the Agent tool offers ``isolation: "remote"``."""
    coordinator: bool = False
    """Coordinator mode: every spawn is async (the Agent tool's schema has no ``run_in_background``),
    a call without ``subagent_type`` starts a ``worker``, and SendMessage exists without teams."""

    @property
    def messaging(self) -> bool:
        """SendMessage reaches any agent of the session, a finished one too (it is resumed)."""
        return self.teams or self.coordinator
