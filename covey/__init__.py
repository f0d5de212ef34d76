"""covey: Claude Code-style agents and sub-agents, each one a Ray actor."""

from covey.agents.definition import AgentDefinition
from covey.errors import AgentUnavailable, CoveyError, LimitExceeded, ModelAPIError, ModelBehaviorError, UserError
from covey.model.scripted import ScriptedModel
from covey.session import RunResult, Session, run

__all__ = [
    "AgentDefinition",
    "AgentUnavailable",
    "CoveyError",
    "LimitExceeded",
    "ModelAPIError",
    "ModelBehaviorError",
    "RunResult",
    "ScriptedModel",
    "Session",
    "UserError",
    "run",
]
