"""Permission rules, modes and decisions: who may run which tool call, and who is asked."""

from covey.permissions.askers import Asker, CallbackAsker, TerminalAsker
from covey.permissions.decisions import Allow, Ask, Decision, Deny, PermissionMode, PermissionRequest
from covey.permissions.policy import LoggedDecision, PermissionPolicy
from covey.permissions.rules import Rule, parse_rule, suggest_rule
from covey.tool_names import canonical_tool_name

__all__ = [
    "Allow", "Ask", "Asker", "CallbackAsker", "Decision", "Deny", "LoggedDecision", "PermissionMode",
    "PermissionPolicy", "PermissionRequest", "Rule", "TerminalAsker", "canonical_tool_name", "parse_rule",
    "suggest_rule",
]
