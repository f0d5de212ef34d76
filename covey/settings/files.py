"""Claude Code's (and covey's) settings files: which there are, in which order, and one file read
and checked for type (``Wire``); ``Settings.load`` (covey/settings/merged.py) merges them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from covey.common.safe_files import READ_ERRORS, read_json, reason
from covey.errors import UserError
from covey.permissions.decisions import PermissionMode
from covey.ratelimit.signals import RateLimitSettings

SETTING_FILES = (  # (label, base: "config", "home" or "project", relative path), lowest precedence first
    ("userSettings", "config", "settings.json"),  # config: CLAUDE_CONFIG_DIR, else ~/.claude, as Claude Code
    ("userSettings", "home", ".covey/settings.json"),
    ("projectSettings", "project", ".claude/settings.json"),
    ("projectSettings", "project", ".covey/settings.json"),
    ("localSettings", "project", ".claude/settings.local.json"),
    ("localSettings", "project", ".covey/settings.local.json"),
)


SETTING_SOURCES = {"user": "userSettings", "project": "projectSettings", "local": "localSettings"}

Sources = frozenset[str] | None
"""The kinds of file a session reads (``--setting-sources``, the SDK's ``setting_sources``): a set
of ``user``, ``project``, ``local``; None: every kind. Managed files, ``--plugin-dir`` plugins and
what the caller passes (``--agents``, ``--mcp-config``, ``--settings``) are read whatever it says."""


def source_set(sources: Iterable[str] | None) -> Sources:
    """``--setting-sources user,project`` as a :data:`Sources` value; an unknown kind is a ``UserError``."""
    if sources is None:
        return None
    chosen = frozenset(sources)
    unknown = sorted(chosen - SETTING_SOURCES.keys())
    if unknown:
        raise UserError(f"--setting-sources: unknown source {unknown[0]!r}; use user, project or local")
    return chosen


def reads(sources: Sources, kind: str) -> bool:
    """Whether files of this kind (``user``, ``project``, ``local``) are read."""
    return sources is None or kind in sources


def setting_labels(sources: Iterable[str] | None) -> set[str]:
    """The file labels ``--setting-sources user,project,local`` names (None: every one)."""
    chosen = source_set(sources)
    return {label for kind, label in SETTING_SOURCES.items() if reads(chosen, kind)}


class WirePermissions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    allow: list[str] = []
    deny: list[str] = []
    ask: list[str] = []
    default_mode: PermissionMode | None = Field(default=None, alias="defaultMode")
    disable_bypass: Any = Field(default=None, alias="disableBypassPermissionsMode")
    block_outside_reads: bool | None = Field(default=None, alias="blockReadsOutsideWorkingDirectories")


class Wire(BaseModel):
    """One file's known keys, checked for type; other keys belong to Claude Code and are ignored."""

    model_config = ConfigDict(extra="ignore")

    permissions: WirePermissions = Field(default_factory=WirePermissions)
    env: dict[str, str] = {}
    model: str | None = None
    model_prices: dict[str, dict[str, float]] = Field(default={}, alias="modelPrices")
    model_limits: dict[str, dict[str, int]] = Field(default={}, alias="modelLimits")
    rate_limits: RateLimitSettings | None = Field(default=None, alias="rateLimits")
    auto_compact_enabled: bool | None = Field(default=None, alias="autoCompactEnabled")
    always_thinking: bool | None = Field(default=None, alias="alwaysThinkingEnabled")
    effort_level: str | None = Field(default=None, alias="effortLevel")
    hooks: dict[str, Any] = {}
    enabled_plugins: dict[str, Any] = Field(default={}, alias="enabledPlugins")
    strict_plugin_only: Any = Field(default=None, alias="strictPluginOnlyCustomization")
    fork_subagent: bool | None = Field(default=None, alias="forkSubagent")
    queue_spawns: bool | None = Field(default=None, alias="queueSpawns")
    agent_progress_summaries: bool | None = Field(default=None, alias="agentProgressSummaries")
    output_style: str | None = Field(default=None, alias="outputStyle")
    managed_rules_only: Any = Field(default=None, alias="allowManagedPermissionRulesOnly")
    managed_hooks_only: Any = Field(default=None, alias="allowManagedHooksOnly")
    parent_behavior: Any = Field(default=None, alias="parentSettingsBehavior")
    mcp_enabled: list[str] = Field(default=[], alias="enabledMcpjsonServers")
    mcp_enable_all: bool | None = Field(default=None, alias="enableAllProjectMcpServers")
    mcp_disabled: list[str] = Field(default=[], alias="disabledMcpjsonServers")
    sandbox: Any = None
    """Claude Code's command sandbox: covey has none (``sandbox_note``)."""


def rule_root(label: str, path: Path, bases: dict[str, Path]) -> Path:
    """Where a ``/path`` rule of this file is anchored (Claude Code): user settings at the
    settings folder (``~/.claude``), local settings at the directory the session started in,
    project settings at the project."""
    if label == "userSettings":
        return path.parent
    if label == "localSettings":
        return bases["project"]
    return path.parent.parent


def read_file(path: Path) -> Wire:
    """One settings file, checked; a bad one (unreadable, a FIFO, over 4 MiB, not UTF-8 JSON,
    nested too deep, a field of the wrong type) is a one-line ``UserError`` naming it."""
    try:
        data = read_json(path, what="a settings file")
    except json.JSONDecodeError as exc:
        raise UserError(f"settings file {str(path)!r} is {reason(exc)}") from None
    except READ_ERRORS as exc:
        raise UserError(f"settings file {str(path)!r} cannot be read: {reason(exc)}") from None
    return validate_wire(data, f"settings file {str(path)!r}")


def validate_wire(data: Any, where: str) -> Wire:
    if not isinstance(data, dict):
        raise UserError(f"{where} must hold a JSON object, not {type(data).__name__}")
    try:
        return Wire.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise UserError(f"{where}: field {field!r}: {' '.join(first['msg'].split())}") from None


class SandboxUnavailable(UserError):
    """Settings require a working command sandbox (``sandbox.failIfUnavailable``), which covey does not have."""


def sandbox_note(enabled_by: str | None, required: bool) -> str | None:
    """What settings' ``sandbox.enabled`` gets from covey, which runs every command unsandboxed, as Claude
    Code on a machine that cannot sandbox: a warning, or (``failIfUnavailable``) the session refused."""
    if enabled_by is None:
        return None
    if required:
        raise SandboxUnavailable(f"{enabled_by}: sandbox.failIfUnavailable: sandbox required but unavailable: "
                                 "covey does not sandbox commands; refusing to start without a working sandbox")
    return (f"{enabled_by}: sandbox.enabled: not applied: covey does not sandbox commands; they run WITHOUT "
            "sandboxing, and the sandbox's network and filesystem restrictions are NOT enforced")
