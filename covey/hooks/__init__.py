"""Hooks: commands (or HTTP endpoints) run at points of an agent's life, answered like Claude Code's (docs/definitions.md#hooks)."""

from covey.hooks.command import HookAnswer
from covey.hooks.config import EVENTS, CommandHook, HookConfig, HookMatcher, HttpHook
from covey.hooks.outcomes import HookOutcome, PreToolOutcome, RequestVerdict
from covey.hooks.read import HookConfigError, HookWarning, ParsedHooks, parse_hooks, read_hooks
from covey.hooks.runner import HookRegistry

__all__ = [
    "EVENTS",
    "CommandHook",
    "HookAnswer",
    "HookConfig",
    "HookConfigError",
    "HookMatcher",
    "HookOutcome",
    "HookRegistry",
    "HookWarning",
    "HttpHook",
    "ParsedHooks",
    "PreToolOutcome",
    "RequestVerdict",
    "parse_hooks",
    "read_hooks",
]
