"""Permission rules, modes and decisions: who may run which tool call, and who is asked.

Names load on first use: ``covey.permissions.modes`` is plain Python, and the thin CLI
client imports it without pydantic.
"""

from __future__ import annotations

from covey.common.lazy import lazy_exports

_EXPORTS = {
    "Allow": "covey.permissions.decisions",
    "Ask": "covey.permissions.decisions",
    "Asker": "covey.permissions.askers",
    "CallbackAsker": "covey.permissions.askers",
    "Decision": "covey.permissions.decisions",
    "Deny": "covey.permissions.decisions",
    "LoggedDecision": "covey.permissions.policy",
    "PermissionMode": "covey.permissions.decisions",
    "PermissionPolicy": "covey.permissions.policy",
    "PermissionRequest": "covey.permissions.decisions",
    "Rule": "covey.permissions.rules",
    "RuleError": "covey.permissions.rules",
    "TerminalAsker": "covey.permissions.askers",
    "canonical_tool_name": "covey.common.tool_names",
    "parse_rule": "covey.permissions.rules",
    "suggest_rule": "covey.permissions.rules",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports("covey.permissions", _EXPORTS)
