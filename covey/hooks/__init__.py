"""Hooks: commands (or HTTP endpoints, or prompts a small model or a verifier agent judges) run at points of an agent's life, answered like Claude Code's (docs/definitions.md#hooks)."""

from covey.hooks.command import HookAnswer
from covey.hooks.config import EVENTS, AgentHook, CommandHook, HookConfig, HookMatcher, HttpHook, PromptHook
from covey.hooks.outcomes import HookOutcome, PreToolOutcome, RequestVerdict
from covey.hooks.read import HookConfigError, HookWarning, ParsedHooks, parse_hooks, read_hooks
from covey.hooks.runner import HookRegistry

__all__ = [
    "EVENTS",
    "AgentHook",
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
    "PromptHook",
    "RequestVerdict",
    "parse_hooks",
    "read_hooks",
]
