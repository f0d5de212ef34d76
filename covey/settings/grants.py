"""What a settings file of an untrusted folder may still say: everything that restricts (deny and
ask rules, a stricter mode, ``disableBypassPermissionsMode``, ``blockReadsOutsideWorkingDirectories``)
and what only describes (model, output style); never what grants (allow rules, hooks, ``env``,
plugins, a mode that lets calls run unasked, prices that would let a budget overrun, approvals of
its own MCP servers)."""

from __future__ import annotations

from typing import Any

from covey.settings.files import Wire
from covey.trust.decision import SetAside

GRANTING_MODES = frozenset({"acceptEdits", "bypassPermissions", "auto"})
"""``defaultMode`` values that let calls run with no one asked (``auto`` reads as default in covey,
but a project choosing it chooses Claude Code's classifier over the person)."""

PROJECT_LABELS = frozenset({"projectSettings", "localSettings"})
"""The settings files a repository can ship (a committed ``settings.local.json`` too)."""


def restrictive_part(wire: Wire, where: str, aside: SetAside) -> Wire:
    """``wire`` without its grants, each one it had recorded in ``aside``."""
    permissions: dict[str, Any] = {}
    if wire.permissions.allow:
        aside.add("allow rules", where)
        permissions["allow"] = []
    if wire.permissions.default_mode in GRANTING_MODES:
        aside.add(f"defaultMode {wire.permissions.default_mode}", where)
        permissions["default_mode"] = None
    update: dict[str, Any] = {"permissions": wire.permissions.model_copy(update=permissions)}
    if wire.hooks:
        aside.add(f"hooks ({', '.join(sorted(str(event) for event in wire.hooks))})", where)
        update["hooks"] = {}
    for attribute, key in (("env", "env"), ("enabled_plugins", "enabledPlugins"), ("model_prices", "modelPrices")):
        if getattr(wire, attribute):
            aside.add(key, where)
            update[attribute] = {}
    if wire.mcp_enabled:
        aside.add("enabledMcpjsonServers", where)
        update["mcp_enabled"] = []
    if wire.mcp_enable_all:
        aside.add("enableAllProjectMcpServers", where)
        update["mcp_enable_all"] = None
    return wire.model_copy(update=update)
