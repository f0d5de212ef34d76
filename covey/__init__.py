"""covey: Claude Code-style agents and sub-agents, each one a Ray actor.

Public names load on first use, so ``import covey`` stays cheap and a module
that needs only the loop or the model layer does not pull in Ray.
"""

from __future__ import annotations

import logging

from covey.common.lazy import lazy_exports

# In a Jupyter kernel without ipywidgets, `import ray` logs "Missing packages: ['ipywidgets']..."
# (ray.widgets.util, at INFO, to stderr): a red box in the notebook about a widget covey never uses.
# covey's own displays need no widget (docs/notebooks.md), so that one message is dropped.
logging.getLogger("ray.widgets.util").addFilter(lambda record: not record.getMessage().startswith("Missing packages"))

_EXPORTS = {
    "AgentDefinition": "covey.definitions.definition",
    "AgentTree": "covey.observe.notebook",
    "AgentUnavailable": "covey.errors",
    "CoveyError": "covey.errors",
    "DetachedSession": "covey.session",
    "LimitExceeded": "covey.errors",
    "Limits": "covey.runtime.limits",
    "ModelAPIError": "covey.errors",
    "ModelBehaviorError": "covey.errors",
    "RunResult": "covey.session",
    "ScriptedModel": "covey.model.scripted",
    "Session": "covey.session",
    "UserError": "covey.errors",
    "attach": "covey.client.detached",
    "map": "covey.rowmap.api",
    "run": "covey.session",
    "session_timeline": "covey.observe.notebook_timeline",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports("covey", _EXPORTS)
